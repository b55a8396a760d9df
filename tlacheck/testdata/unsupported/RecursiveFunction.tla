---- MODULE RecursiveFunction ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x
Inv == fact[5] = 120
fact[n \in 0..5] == IF n = 0 THEN 1 ELSE n * fact[n - 1]
====
