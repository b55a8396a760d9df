-------------------------- MODULE SoundGate_IndCheck --------------------------
(***************************************************************************)
(* A model check that IndInv is inductive, on small constants (bounded     *)
(* evidence, not a proof; spec/tlaps/ has the proof text).                 *)
(*                                                                         *)
(* IndInit is the set of ALL states that satisfy IndInv, enumerated so     *)
(* that TLC can afford it: each variable is drawn from its type and at     *)
(* once filtered by the conjuncts of IndInv that constrain it, and IndInv  *)
(* itself closes the list. Two types are narrowed: admits to 0..1 and      *)
(* admitCtx to {{}, {GoodCtx}}; HistoryShape (part of IndInv) allows no    *)
(* other values, so no state satisfying IndInv is left out.                *)
(*                                                                         *)
(* Checking IndInv as an invariant of IndInit /\ [][Next]_vars then checks *)
(* IndInv /\ Next => IndInv' from every IndInv state (every successor of   *)
(* an initial state is checked), and the invariants Safety and Structure   *)
(* check IndInv => Safety /\ Structure on all of them. Init => IndInv is   *)
(* checked by the ordinary configs, which list IndInv as an invariant.     *)
(***************************************************************************)
EXTENDS SoundGate

IndInit ==
  /\ runStatus \in [Runs -> RunStatuses]
  /\ runEpoch  \in [Runs -> 0..(MaxEpoch + 1)]
  /\ \A r \in Runs :
       /\ runStatus[r] = "none" => runEpoch[r] = 0
       /\ runStatus[r] = "active" => runEpoch[r] \in 1..MaxEpoch
       /\ runStatus[r] \in Final => runEpoch[r] \in 2..(MaxEpoch + 1)
  /\ effStatus \in [Runs -> [Keys -> EffectStatuses]]
  /\ \A r \in Runs, k \in Keys :
       /\ runStatus[r] = "none" => effStatus[r][k] = "absent"
       /\ Live(effStatus[r][k]) => runStatus[r] = "active"
  /\ gated \in [Runs -> [Keys -> BOOLEAN]]
  /\ approved \in [Runs -> [Keys -> BOOLEAN]]
  /\ \A r \in Runs, k \in Keys :
       /\ ~Live(effStatus[r][k]) => ~gated[r][k]
       /\ effStatus[r][k] \in {"absent", "rejected"} => ~approved[r][k]
       /\ Live(effStatus[r][k]) /\ approved[r][k] => gated[r][k]
       /\ effStatus[r][k] = "released" /\ gated[r][k] => approved[r][k]
  /\ effEpoch \in [Runs -> [Keys -> 0..(MaxEpoch + 1)]]
  /\ \A r \in Runs, k \in Keys :
       effEpoch[r][k] = IF Live(effStatus[r][k]) THEN runEpoch[r] ELSE 0
  /\ outcome \in [Runs -> [Keys -> {"none"} \cup Outcomes]]
  /\ \A r \in Runs, k \in Keys : (outcome[r][k] # "none") <=> (effStatus[r][k] = "completed")
  /\ pending \in [Runs -> SUBSET Keys]
  /\ PendingExact
  /\ NoOrphanHold
  /\ doomed \in [Runs -> SUBSET Keys]
  /\ \A r \in Runs : doomed[r] = {k \in Keys : effStatus[r][k] = "rejected"}
  /\ admits \in [Runs -> [Keys -> 0..1]]
  /\ admitCtx \in [Runs -> [Keys -> {{}, {GoodCtx}}]]
  /\ IndInv
=============================================================================
