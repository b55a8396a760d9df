---- MODULE SymPair ----
\* Two symmetric sets, for the tests of symmetry reduction (tlacheck/symsig.go): a
\* function of both (f), a function from one to the other or a plain model value
\* (owner), a set of tuples of both (seen) and a record of one of each (last). In the
\* initial state every value of each set looks like every other.
EXTENDS Naturals, TLC
CONSTANTS A, B, None
VARIABLES f, owner, seen, last
vars == <<f, owner, seen, last>>

Init == /\ f = [a \in A |-> [b \in B |-> 0]]
        /\ owner = [b \in B |-> None]
        /\ seen = {}
        /\ last = None

Flip(a, b) == /\ f[a][b] = 0
              /\ f' = [f EXCEPT ![a][b] = 1]
              /\ last' = [who |-> a, what |-> b]
              /\ UNCHANGED <<owner, seen>>

Own(a, b) == /\ owner[b] = None
             /\ f[a][b] = 1
             /\ owner' = [owner EXCEPT ![b] = a]
             /\ seen' = seen \cup {<<a, b>>}
             /\ UNCHANGED <<f, last>>

Free(b) == /\ owner[b] # None
           /\ owner' = [owner EXCEPT ![b] = None]
           /\ UNCHANGED <<f, seen, last>>

Next == \E a \in A, b \in B : Flip(a, b) \/ Own(a, b) \/ Free(b)

Spec == Init /\ [][Next]_vars

TypeOK == /\ f \in [A -> [B -> {0, 1}]]
          /\ owner \in [B -> A \cup {None}]
          /\ seen \subseteq A \X B
          /\ last \in {None} \cup [who : A, what : B]

\* An owner once flipped its bit of the key on.
Owned == \A b \in B : owner[b] # None => <<owner[b], b>> \in seen

\* The SYMMETRY sets of the configs.
Product == {p @@ q : p \in Permutations(A), q \in Permutations(B)}
Union == Permutations(A) \cup Permutations(B)
Swap(S) == LET x == CHOOSE x \in S : TRUE
               y == CHOOSE y \in S \ {x} : TRUE
           IN  (x :> y) @@ (y :> x) @@ [z \in S \ {x, y} |-> z]
\* Diagonal is a set former, not {Swap(A) @@ Swap(B), Id}: TLC ignores, with a
\* warning, a SYMMETRY set of no more elements than its expression has arguments.
Diagonal == {IF s THEN Swap(A) @@ Swap(B) ELSE [v \in A \cup B |-> v] : s \in BOOLEAN}
====
