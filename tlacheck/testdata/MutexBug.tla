---- MODULE MutexBug ----
\* A mutex with a deliberate bug: a process checks the other flags and only
\* later raises its own, so two processes can both enter the critical section.
EXTENDS Naturals
CONSTANT Procs
VARIABLES pc, flag

Init == /\ pc = [p \in Procs |-> "idle"]
        /\ flag = [p \in Procs |-> FALSE]

Check(p) == /\ pc[p] = "idle"
            /\ \A q \in Procs \ {p} : ~flag[q]
            /\ pc' = [pc EXCEPT ![p] = "set"]
            /\ UNCHANGED flag

Set(p) == /\ pc[p] = "set"
          /\ flag' = [flag EXCEPT ![p] = TRUE]
          /\ pc' = [pc EXCEPT ![p] = "cs"]

Exit(p) == /\ pc[p] = "cs"
           /\ flag' = [flag EXCEPT ![p] = FALSE]
           /\ pc' = [pc EXCEPT ![p] = "idle"]

Next == \E p \in Procs : Check(p) \/ Set(p) \/ Exit(p)

MutualExclusion == \A p, q \in Procs : (pc[p] = "cs" /\ pc[q] = "cs") => p = q
====
