---- MODULE NestedModule ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals
VARIABLE x
---- MODULE Inner ----
====
Init == x = 0
Next == x' = x
Inv == TRUE
====
