---- MODULE NoBaseCase ----
\* RECURSIVE operators with no base case, in an expression (Next) and in an action
\* (NextAction): the checker must stop them with an evaluation error that names the
\* operator and the call, not overflow the Go stack.
EXTENDS Naturals
VARIABLE x

RECURSIVE Loop(_)
Loop(n) == Loop(n + 1)

RECURSIVE Step(_)
Step(n) == UNCHANGED x /\ Step(n + 1)

Init == x = 0
Next == x' = Loop(x)
NextAction == Step(x)
====
