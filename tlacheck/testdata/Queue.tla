---- MODULE Queue ----
\* Exercises sequences, records, sets of sets, LET, CASE, CHOOSE, :> and @@.
EXTENDS Naturals, Sequences, FiniteSets, TLC
CONSTANTS Msgs, MaxLen
VARIABLES q, got, log, last

Init == /\ q = <<>>
        /\ got = {}
        /\ log = [m \in Msgs |-> 0]
        /\ last = [kind |-> "none", msg |-> CHOOSE m \in Msgs : TRUE]

Send(m) == /\ Len(q) < MaxLen
           /\ q' = Append(q, m)
           /\ log' = [log EXCEPT ![m] = @ + 1]
           /\ last' = [last EXCEPT !.kind = "send", !.msg = m]
           /\ UNCHANGED got

Recv == /\ q # <<>>
        /\ LET h == Head(q)
               kind == CASE Len(q) = 1 -> "recv-last"
                         [] OTHER      -> "recv"
           IN /\ got' = got \cup {h}
              /\ q' = Tail(q)
              /\ last' = [kind |-> kind, msg |-> h]
        /\ UNCHANGED log

Reset == /\ Cardinality(got) = Cardinality(Msgs)
         /\ got' = {}
         /\ log' = [m \in Msgs |-> 0] @@ (CHOOSE m \in Msgs : TRUE) :> 0
         /\ UNCHANGED <<q, last>>

Next == \/ \E m \in Msgs : Send(m)
        \/ Recv
        \/ Reset

Bounded == \A m \in Msgs : log[m] <= 2

TypeOK == /\ q \in Seq(Msgs)
          /\ got \in SUBSET Msgs
          /\ log \in [Msgs -> 0..3]
          /\ last \in [kind : {"none", "send", "recv", "recv-last"}, msg : Msgs]
          /\ Len(q) <= MaxLen
          /\ UNION {{m} : m \in got} = got
====
