---- MODULE Proof ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x
Inv == x = 0
THEOREM Init => Inv
  OBVIOUS
====
