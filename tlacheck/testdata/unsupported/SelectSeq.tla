---- MODULE SelectSeq ----
\* Uses an unsupported construct; tlacheck must reject it with its name and position.
EXTENDS Naturals, Sequences
VARIABLE x
Init == x = 0
Next == x' = x
Inv == SelectSeq(<<1, 2>>, Big) = <<2>>
Big(y) == y > 1
====
