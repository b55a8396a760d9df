---- MODULE Countdown ----
\* Deadlocks when the counter reaches 0.
EXTENDS Naturals
CONSTANT N
VARIABLE x
Init == x = N
Tick == x > 0 /\ x' = x - 1
Next == Tick
====
