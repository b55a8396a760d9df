---- MODULE RandomElement ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals, TLC
VARIABLE x
Init == x = 0
Next == x' = x
Inv == RandomElement({1, 2}) \in {1, 2}
====
