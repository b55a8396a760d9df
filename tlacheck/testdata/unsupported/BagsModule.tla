---- MODULE BagsModule ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals, Bags
VARIABLE x
Init == x = 0
Next == x' = x
Inv == TRUE
====
