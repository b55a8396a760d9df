---- MODULE UnboundedChoose ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x
Inv == (CHOOSE y : y = 1) = 1
====
