---- MODULE Features ----
\* Successor generation corner cases (x' \in SUBSET S, \A in actions, LET, CASE,
\* RECURSIVE, [A]_<<...>>), cross-checked against TLC.
EXTENDS Integers, Sequences, FiniteSets, TLC
CONSTANTS P, N
VARIABLES s, f, q, t

RECURSIVE Sum(_)
Sum(S) == IF S = {} THEN 0 ELSE LET e == CHOOSE e \in S : TRUE IN e + Sum(S \ {e})

Init == /\ s \in SUBSET (1..2)
        /\ f \in [P -> {0, 1}]
        /\ q = <<>>
        /\ t \in {<<a, b>> : a \in 0..1, b \in {"x", "y"}}

Grow == /\ s' \in SUBSET (s \cup {Sum(s) % 3})
        /\ UNCHANGED <<f, q, t>>

Flip(p) == /\ f' = [f EXCEPT ![p] = 1 - @]
           /\ LET n == Len(q) IN
                IF n < N THEN q' = Append(q, p) ELSE q' = Tail(q)
           /\ UNCHANGED <<s, t>>

AllOn == /\ \A p \in P : f[p] = 1
         /\ f' \in [P -> {0, 1}]
         /\ \A p \in P : f'[p] \in {0, f[p] - 1}
         /\ q' = <<>>
         /\ UNCHANGED <<s, t>>

Rot == /\ t' = CASE t[2] = "x" -> <<t[1], "y">>
                 [] OTHER      -> <<1 - t[1], "x">>
       /\ UNCHANGED <<s, f, q>>

Next == \/ Grow
        \/ \E p \in P : Flip(p)
        \/ AllOn
        \/ Rot

Spec == Init /\ [][Next]_<<s, f, q, t>>
Inv == Cardinality(s) <= 3 /\ Len(q) <= N
====
