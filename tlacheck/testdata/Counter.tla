---- MODULE Counter ----
\* Two counters that move together and wrap at N: an inductive-invariant example.
EXTENDS Naturals
CONSTANT N
VARIABLES x, y

TypeOK == x \in 0..N /\ y \in 0..N

Init == x = 0 /\ y = 0

Inc == x < N /\ x' = x + 1 /\ y' = y + 1
Wrap == x = N /\ x' = 0 /\ y' = 0
Next == Inc \/ Wrap

Safety == x = y
IndInv == TypeOK /\ x = y
\* Not inductive: from x = 0, y = N, Inc leaves 0..N.
WeakInv == TypeOK
====
