----------------------------- MODULE BrokenP3ReopenRetired -----------------------------
(***************************************************************************)
(* DELIBERATELY BROKEN copy of SoundGate.tla: TLC MUST FIND A VIOLATION    *)
(* (exit 12). Mutation: Open takes a retired id for a new run, so a key   *)
(* of the retired run is admitted again.                                   *)
(* The gate of soundgate as a state machine: docs/contract.md, transcribed. *)
(*                                                                         *)
(* Every request of the contract that gets an answer (not an error) is a   *)
(* step of Next, labelled with the action and its arguments. A request     *)
(* whose answer changes nothing (a duplicate, a denial, a repeated held,   *)
(* an Open of a known run, a Cancel of a final run, a repeated decision or *)
(* completion) is a stuttering step: the same state, an edge to itself.    *)
(* A request refused with an error is no step at all (errors change        *)
(* nothing and are not answers). The answers themselves are the operators  *)
(* AdmitAnswer, DecideAnswer, CompleteAnswer, FenceAnswer below; the       *)
(* actions are enabled exactly when the answer is not an error.            *)
(*                                                                         *)
(* A finished run may be retired (Retire): the gate forgets its effects    *)
(* and keeps only that its id is taken, so no key of it is admitted again  *)
(* and its id is never opened again. The shell retires a run once its     *)
(* retention period has passed; as with Timeout, the spec lets any         *)
(* finished run take the step, and any id never opened.                   *)
(*                                                                         *)
(* Not modelled: deadlines (any active run may take a Timeout step: the    *)
(* shell calls Timeout once the deadline passes, and Admit step 2 is a     *)
(* Timeout followed by an Admit), result bytes of a completed effect, the  *)
(* implementation limits. Epochs are bounded for model checking: Fence is  *)
(* enabled only below MaxEpoch; Cancel and Timeout always are, so a final  *)
(* run's epoch is at most MaxEpoch + 1. docs/spec-notes.md explains the    *)
(* choices and the history variables.                                      *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS Runs,      \* run ids (model values)
          Keys,      \* idempotency keys (model values)
          MaxEpoch   \* Fence is enabled only while a run's epoch is below it

ASSUME MaxEpoch \in Nat /\ MaxEpoch >= 1

RunStatuses    == {"none", "active", "cancelled", "timed_out", "retired"}
EffectStatuses == {"absent", "held", "released", "admitted", "completed", "rejected"}
Decisions      == {"approve", "reject"}
Outcomes       == {"ok", "failed"}
Epochs         == 1..(MaxEpoch + 1)     \* epochs a request may present
Final          == {"cancelled", "timed_out"}

VARIABLES
  runStatus,   \* runStatus[r] \in RunStatuses
  runEpoch,    \* runEpoch[r]: the run's epoch, 0 while the run is "none"
  pending,     \* pending[r]: the keys whose approval is open
  effStatus,   \* effStatus[r][k] \in EffectStatuses
  effEpoch,    \* effEpoch[r][k]: the epoch a held/released effect was asked at, else 0
  gated,       \* gated[r][k]: a held/released effect is gated, else FALSE
  approved,    \* approved[r][k]: its own approval was granted (kept once admitted/completed)
  outcome,     \* outcome[r][k]: "ok"/"failed" once completed, else "none"
  \* History (no effect on behaviour; it records what the properties talk about):
  doomed,      \* doomed[r]: keys held when an approval of r was rejected (and not
               \* approved gated effects), or themselves rejected
  admits,      \* admits[r][k]: number of `admit` answers given for (r, k), saturating at 2
  admitCtx     \* admitCtx[r][k]: the circumstances of each `admit` answer for (r, k)

gateVars == <<runStatus, runEpoch, pending, effStatus, effEpoch, gated, approved, outcome>>
histVars == <<doomed, admits, admitCtx>>
vars     == <<runStatus, runEpoch, pending, effStatus, effEpoch, gated, approved, outcome,
              doomed, admits, admitCtx>>

(* The circumstances recorded with an `admit` answer to Admit(r, k, e, _):  *)
(* the run's status and pending set at that moment, whether e was the run's *)
(* epoch, and whether k was doomed.                                         *)
AdmitContexts == [status : RunStatuses, pending : SUBSET Keys,
                  current : BOOLEAN, doomed : BOOLEAN]

Ctx(r, k, e) == [status  |-> runStatus[r],
                 pending |-> pending[r],
                 current |-> e = runEpoch[r],
                 doomed  |-> k \in doomed[r]]

-----------------------------------------------------------------------------
(* Answers. An answer is a record [answer, reason]: answer is one of the    *)
(* contract's admit answers, or "error" with reason the error's name.       *)

Ans(a)    == [answer |-> a, reason |-> ""]
Denied(w) == [answer |-> "denied", reason |-> w]
Err(c)    == [answer |-> "error", reason |-> c]

(* Admit, contract steps 1-10 in order (step 2, the deadline, is a Timeout *)
(* step of its own here).                                                   *)
AdmitAnswer(r, k, e, g) ==
  IF runStatus[r] = "none" THEN Err("unknown_run")
  ELSE IF runStatus[r] = "retired" THEN Denied("retired")
  ELSE IF runStatus[r] = "cancelled" THEN Denied("cancelled")
  ELSE IF runStatus[r] = "timed_out" THEN Denied("timed_out")
  ELSE IF e < runEpoch[r] THEN Denied("stale_epoch")
  ELSE IF e > runEpoch[r] THEN Err("bad_epoch")
  ELSE IF effStatus[r][k] \in {"admitted", "completed"} THEN Ans("duplicate")
  ELSE IF effStatus[r][k] = "rejected" THEN Denied("rejected")
  ELSE IF effStatus[r][k] = "held" THEN Ans("held")
  ELSE IF effStatus[r][k] = "absent" /\ g THEN Ans("held")
  ELSE IF pending[r] # {} THEN Ans("held")
  ELSE Ans("admit")

(* Decide: "decided" (a pending approval was decided), "repeat" (the same   *)
(* decision was already taken), or an error name.                           *)
DecideAnswer(r, k, d) ==
  IF runStatus[r] = "none" THEN "unknown_run"
  ELSE IF runStatus[r] = "retired" THEN "run_retired"
  ELSE IF k \notin pending[r] THEN
         IF \/ d = "approve" /\ approved[r][k]
            \/ d = "reject" /\ effStatus[r][k] = "rejected"
         THEN "repeat" ELSE "not_pending"
  ELSE "decided"

(* Complete: "completed", "repeat", or an error name. *)
CompleteAnswer(r, k, o) ==
  IF runStatus[r] = "none" THEN "unknown_run"
  ELSE IF runStatus[r] = "retired" THEN "run_retired"
  ELSE IF effStatus[r][k] = "admitted" THEN "completed"
  ELSE IF effStatus[r][k] = "completed" THEN
         IF outcome[r][k] = o THEN "repeat" ELSE "conflict"
  ELSE "not_admitted"

(* Fence: "fenced" or an error name. *)
FenceAnswer(r) ==
  IF runStatus[r] = "none" THEN "unknown_run"
  ELSE IF runStatus[r] = "retired" THEN "run_retired"
  ELSE IF runStatus[r] \in Final THEN "run_final"
  ELSE "fenced"

-----------------------------------------------------------------------------
(* Pure helpers (no primes): the run r's effects with held and released     *)
(* ones dropped back to absent, flags cleared (Cancel, Fence, Timeout).     *)

Live(s) == s \in {"held", "released"}

DropStatus(r)   == [effStatus EXCEPT ![r] = [k \in Keys |-> IF Live(effStatus[r][k]) THEN "absent" ELSE effStatus[r][k]]]
DropEpoch(r)    == [effEpoch  EXCEPT ![r] = [k \in Keys |-> 0]]
DropGated(r)    == [gated     EXCEPT ![r] = [k \in Keys |-> FALSE]]
DropApproved(r) == [approved  EXCEPT ![r] = [k \in Keys |-> IF Live(effStatus[r][k]) THEN FALSE ELSE approved[r][k]]]

Init ==
  /\ runStatus = [r \in Runs |-> "none"]
  /\ runEpoch  = [r \in Runs |-> 0]
  /\ pending   = [r \in Runs |-> {}]
  /\ effStatus = [r \in Runs |-> [k \in Keys |-> "absent"]]
  /\ effEpoch  = [r \in Runs |-> [k \in Keys |-> 0]]
  /\ gated     = [r \in Runs |-> [k \in Keys |-> FALSE]]
  /\ approved  = [r \in Runs |-> [k \in Keys |-> FALSE]]
  /\ outcome   = [r \in Runs |-> [k \in Keys |-> "none"]]
  /\ doomed    = [r \in Runs |-> {}]
  /\ admits    = [r \in Runs |-> [k \in Keys |-> 0]]
  /\ admitCtx  = [r \in Runs |-> [k \in Keys |-> {}]]

-----------------------------------------------------------------------------
(* Open(r): a new run is active at epoch 1; a retired id is refused        *)
(* (run_retired, no step); otherwise nothing changes.                      *)
Open(r) ==
  /\ TRUE
  /\ IF runStatus[r] \in {"none", "retired"}
     THEN /\ runStatus' = [runStatus EXCEPT ![r] = "active"]
          /\ runEpoch'  = [runEpoch EXCEPT ![r] = 1]
          /\ UNCHANGED <<pending, effStatus, effEpoch, gated, approved, outcome>>
          /\ UNCHANGED histVars
     ELSE UNCHANGED vars

(* Admit(r, k, e, g): enabled when the answer is not an error. *)
Admit(r, k, e, g) ==
  LET a == AdmitAnswer(r, k, e, g) IN
  /\ a.answer # "error"
  /\ IF a.answer = "admit" THEN
       \* step 10: k (absent, or released) becomes admitted
       /\ effStatus' = [effStatus EXCEPT ![r][k] = "admitted"]
       /\ effEpoch'  = [effEpoch EXCEPT ![r][k] = 0]
       /\ gated'     = [gated EXCEPT ![r][k] = FALSE]
       /\ admits'    = [admits EXCEPT ![r][k] = IF @ < 2 THEN @ + 1 ELSE 2]
       /\ admitCtx'  = [admitCtx EXCEPT ![r][k] = @ \cup {Ctx(r, k, e)}]
       /\ UNCHANGED <<runStatus, runEpoch, pending, approved, outcome, doomed>>
     ELSE IF a.answer = "held" /\ effStatus[r][k] = "absent" THEN
       \* steps 8 and 9: an absent k becomes held at epoch e; if gated, its approval opens
       /\ effStatus' = [effStatus EXCEPT ![r][k] = "held"]
       /\ effEpoch'  = [effEpoch EXCEPT ![r][k] = e]
       /\ gated'     = [gated EXCEPT ![r][k] = g]
       /\ pending'   = IF g THEN [pending EXCEPT ![r] = @ \cup {k}] ELSE pending
       /\ UNCHANGED <<runStatus, runEpoch, approved, outcome>>
       /\ UNCHANGED histVars
     ELSE
       \* duplicate, denied, held with no change (k held, or released while pending)
       UNCHANGED vars

(* Decide(r, k, d): enabled when the answer is not an error. *)
Decide(r, k, d) ==
  LET a == DecideAnswer(r, k, d) IN
  /\ a \in {"decided", "repeat"}
  /\ IF a = "repeat" THEN UNCHANGED vars
     ELSE
       LET \* step 3: reject rejects every held effect that is not (gated and approved)
           rej  == IF d = "reject"
                   THEN {j \in Keys : effStatus[r][j] = "held" /\ ~(gated[r][j] /\ approved[r][j])}
                   ELSE {}
           pend == IF d = "approve" THEN pending[r] \ {k} ELSE {}
           st3  == [j \in Keys |-> IF j \in rej THEN "rejected" ELSE effStatus[r][j]]
           \* step 4: with no pending approval left, every held effect is released
           st4  == IF pend = {}
                   THEN [j \in Keys |-> IF st3[j] = "held" THEN "released" ELSE st3[j]]
                   ELSE st3
       IN
       /\ pending'   = [pending EXCEPT ![r] = pend]
       /\ effStatus' = [effStatus EXCEPT ![r] = st4]
       /\ effEpoch'  = [effEpoch EXCEPT ![r] = [j \in Keys |-> IF j \in rej THEN 0 ELSE effEpoch[r][j]]]
       /\ gated'     = [gated EXCEPT ![r] = [j \in Keys |-> IF j \in rej THEN FALSE ELSE gated[r][j]]]
       /\ approved'  = [approved EXCEPT ![r] =
                          [j \in Keys |-> IF d = "approve" /\ j = k THEN TRUE ELSE approved[r][j]]]
       \* history: what P2 protects, stated from the brief, not from rej
       /\ doomed'    = IF d = "reject"
                       THEN [doomed EXCEPT ![r] = @ \cup {k} \cup
                               {j \in Keys : effStatus[r][j] = "held" /\ ~(gated[r][j] /\ approved[r][j])}]
                       ELSE doomed
       /\ UNCHANGED <<runStatus, runEpoch, outcome, admits, admitCtx>>

(* Complete(r, k, o): enabled when the answer is not an error. *)
Complete(r, k, o) ==
  LET a == CompleteAnswer(r, k, o) IN
  /\ a \in {"completed", "repeat"}
  /\ IF a = "completed"
     THEN /\ effStatus' = [effStatus EXCEPT ![r][k] = "completed"]
          /\ outcome'   = [outcome EXCEPT ![r][k] = o]
          /\ UNCHANGED <<runStatus, runEpoch, pending, effEpoch, gated, approved>>
          /\ UNCHANGED histVars
     ELSE UNCHANGED vars

(* Cancel(r): a tombstone for an unknown run, a final run for an active one, *)
(* nothing for a final or retired one. Always answered.                      *)
Cancel(r) ==
  IF runStatus[r] = "none" THEN
    /\ runStatus' = [runStatus EXCEPT ![r] = "cancelled"]
    /\ runEpoch'  = [runEpoch EXCEPT ![r] = 2]
    /\ UNCHANGED <<pending, effStatus, effEpoch, gated, approved, outcome>>
    /\ UNCHANGED histVars
  ELSE IF runStatus[r] = "active" THEN
    /\ runStatus' = [runStatus EXCEPT ![r] = "cancelled"]
    /\ runEpoch'  = [runEpoch EXCEPT ![r] = @ + 1]
    /\ pending'   = [pending EXCEPT ![r] = {}]
    /\ effStatus' = DropStatus(r)
    /\ effEpoch'  = DropEpoch(r)
    /\ gated'     = DropGated(r)
    /\ approved'  = DropApproved(r)
    /\ UNCHANGED outcome
    /\ UNCHANGED histVars
  ELSE UNCHANGED vars

(* Fence(r): a new epoch of an active run; enabled below MaxEpoch only. *)
Fence(r) ==
  /\ FenceAnswer(r) = "fenced"
  /\ runEpoch[r] < MaxEpoch
  /\ runEpoch'  = [runEpoch EXCEPT ![r] = @ + 1]
  /\ pending'   = [pending EXCEPT ![r] = {}]
  /\ effStatus' = DropStatus(r)
  /\ effEpoch'  = DropEpoch(r)
  /\ gated'     = DropGated(r)
  /\ approved'  = DropApproved(r)
  /\ UNCHANGED <<runStatus, outcome>>
  /\ UNCHANGED histVars

(* Timeout(r): an active run's deadline passed; as Cancel, with timed_out. *)
Timeout(r) ==
  /\ runStatus[r] = "active"
  /\ runStatus' = [runStatus EXCEPT ![r] = "timed_out"]
  /\ runEpoch'  = [runEpoch EXCEPT ![r] = @ + 1]
  /\ pending'   = [pending EXCEPT ![r] = {}]
  /\ effStatus' = DropStatus(r)
  /\ effEpoch'  = DropEpoch(r)
  /\ gated'     = DropGated(r)
  /\ approved'  = DropApproved(r)
  /\ UNCHANGED outcome
  /\ UNCHANGED histVars

(* Finished(r): nothing of r can still happen but replays and completions   *)
(* of what was admitted: r is final, or active with every effect absent,    *)
(* completed or rejected (no approval pending, nothing held, released or   *)
(* admitted and not yet completed).                                        *)
Finished(r) ==
  \/ runStatus[r] \in Final
  \/ /\ runStatus[r] = "active"
     /\ \A k \in Keys : effStatus[r][k] \in {"absent", "completed", "rejected"}

(* Retire(r): a finished run is forgotten but for its id, which stays       *)
(* taken: every effect drops to absent, its epoch to 0. What P1-P4 talk     *)
(* about is history and stays. The shell takes this step once the run's     *)
(* retention period has passed. An id never opened may be retired too: it   *)
(* is then never opened (a gate that keeps a watermark over ordered ids     *)
(* retires every id below it at once).                                      *)
Retire(r) ==
  /\ Finished(r) \/ runStatus[r] = "none"
  /\ runStatus' = [runStatus EXCEPT ![r] = "retired"]
  /\ runEpoch'  = [runEpoch EXCEPT ![r] = 0]
  /\ pending'   = [pending EXCEPT ![r] = {}]
  /\ effStatus' = [effStatus EXCEPT ![r] = [k \in Keys |-> "absent"]]
  /\ effEpoch'  = [effEpoch EXCEPT ![r] = [k \in Keys |-> 0]]
  /\ gated'     = [gated EXCEPT ![r] = [k \in Keys |-> FALSE]]
  /\ approved'  = [approved EXCEPT ![r] = [k \in Keys |-> FALSE]]
  /\ outcome'   = [outcome EXCEPT ![r] = [k \in Keys |-> "none"]]
  /\ UNCHANGED histVars

Next ==
  \/ \E r \in Runs : Open(r)
  \/ \E r \in Runs, k \in Keys, e \in Epochs, g \in BOOLEAN : Admit(r, k, e, g)
  \/ \E r \in Runs, k \in Keys, d \in Decisions : Decide(r, k, d)
  \/ \E r \in Runs, k \in Keys, o \in Outcomes : Complete(r, k, o)
  \/ \E r \in Runs : Cancel(r)
  \/ \E r \in Runs : Fence(r)
  \/ \E r \in Runs : Timeout(r)
  \/ \E r \in Runs : Retire(r)

Spec == Init /\ [][Next]_vars

(* Runs are interchangeable and so are keys: no action, answer or property *)
(* names a particular run or key, so permuting them maps behaviours to     *)
(* behaviours and leaves every invariant's value unchanged. The set is the *)
(* whole group (a permutation of runs combined with one of keys), so that  *)
(* symmetry reduction keeps exactly one state per orbit.                   *)
Symmetry == {p @@ q : p \in Permutations(Runs), q \in Permutations(Keys)}

-----------------------------------------------------------------------------
(* Types. *)
TypeOK ==
  /\ runStatus \in [Runs -> RunStatuses]
  /\ runEpoch  \in [Runs -> 0..(MaxEpoch + 1)]
  /\ pending   \in [Runs -> SUBSET Keys]
  /\ effStatus \in [Runs -> [Keys -> EffectStatuses]]
  /\ effEpoch  \in [Runs -> [Keys -> 0..(MaxEpoch + 1)]]
  /\ gated     \in [Runs -> [Keys -> BOOLEAN]]
  /\ approved  \in [Runs -> [Keys -> BOOLEAN]]
  /\ outcome   \in [Runs -> [Keys -> {"none"} \cup Outcomes]]
  /\ doomed    \in [Runs -> SUBSET Keys]
  /\ admits    \in [Runs -> [Keys -> 0..2]]
  /\ admitCtx  \in [Runs -> [Keys -> SUBSET AdmitContexts]]

(* The properties of the brief (P1-P4), over the history. *)

\* P1 hold-until-decided: no `admit` while the run has a pending approval.
P1 == \A r \in Runs, k \in Keys : \A c \in admitCtx[r][k] : c.pending = {}

\* P2 reject-cancels: a doomed effect never gets `admit`.
P2 == \A r \in Runs, k \in Keys : \A c \in admitCtx[r][k] : ~c.doomed

\* P3 dedup-on-replay: at most one `admit` per (r, k).
P3 == \A r \in Runs, k \in Keys : admits[r][k] <= 1

\* P4 fence-on-cancel: no `admit` for a final run, nor to a stale epoch.
P4 == \A r \in Runs, k \in Keys : \A c \in admitCtx[r][k] : c.status = "active" /\ c.current

Safety == P1 /\ P2 /\ P3 /\ P4

(* The structural invariants of the brief. *)

\* No held effect without a pending approval of an active run.
NoOrphanHold ==
  \A r \in Runs, k \in Keys :
    effStatus[r][k] = "held" => runStatus[r] = "active" /\ pending[r] # {}

\* The pending set is exactly the undecided gated held effects.
PendingExact ==
  \A r \in Runs :
    pending[r] = {k \in Keys : effStatus[r][k] = "held" /\ gated[r][k] /\ ~approved[r][k]}

\* Held and released effects belong to the run's current epoch.
CurrentEpoch ==
  \A r \in Runs, k \in Keys : Live(effStatus[r][k]) => effEpoch[r][k] = runEpoch[r]

Structure == NoOrphanHold /\ PendingExact /\ CurrentEpoch

-----------------------------------------------------------------------------
(* The inductive invariant. spec/tlaps/SoundGateProofs.tla proves           *)
(* Init => IndInv, IndInv /\ [Next]_vars => IndInv' and IndInv => Safety /\ *)
(* Structure (proof text only: TLAPS is not available here).                *)

GoodCtx == [status |-> "active", pending |-> {}, current |-> TRUE, doomed |-> FALSE]

RunShape ==
  \A r \in Runs :
    /\ runStatus[r] = "none" =>
         /\ runEpoch[r] = 0
         /\ doomed[r] = {}
         /\ \A k \in Keys : effStatus[r][k] = "absent" /\ ~approved[r][k]
    /\ runStatus[r] = "retired" =>
         /\ runEpoch[r] = 0
         /\ pending[r] = {}
         /\ \A k \in Keys : effStatus[r][k] = "absent" /\ ~approved[r][k]
    /\ runStatus[r] = "active" => runEpoch[r] \in 1..MaxEpoch
    /\ runStatus[r] \in Final => runEpoch[r] \in 2..(MaxEpoch + 1)
    /\ runStatus[r] \in Final => pending[r] = {}

EffectShape ==
  \A r \in Runs, k \in Keys :
    /\ ~Live(effStatus[r][k]) => effEpoch[r][k] = 0 /\ ~gated[r][k]
    /\ effStatus[r][k] \in {"absent", "rejected"} => ~approved[r][k]
    /\ Live(effStatus[r][k]) /\ approved[r][k] => gated[r][k]
    /\ effStatus[r][k] = "released" /\ gated[r][k] => approved[r][k]
    /\ Live(effStatus[r][k]) => runStatus[r] = "active"
    /\ (outcome[r][k] # "none") <=> (effStatus[r][k] = "completed")

\* A retired run keeps its history, which its effects no longer show.
HistoryShape ==
  \A r \in Runs :
    IF runStatus[r] = "retired"
    THEN \A k \in Keys :
           /\ admits[r][k] \in 0..1
           /\ admitCtx[r][k] = IF admits[r][k] = 1 THEN {GoodCtx} ELSE {}
    ELSE
      /\ doomed[r] = {k \in Keys : effStatus[r][k] = "rejected"}
      /\ \A k \in Keys :
           IF effStatus[r][k] \in {"admitted", "completed"}
           THEN admits[r][k] = 1 /\ admitCtx[r][k] = {GoodCtx}
           ELSE admits[r][k] = 0 /\ admitCtx[r][k] = {}

IndInv ==
  /\ TypeOK
  /\ RunShape
  /\ EffectShape
  /\ HistoryShape
  /\ Structure

-----------------------------------------------------------------------------
(***************************************************************************)
(* IndInit: for a model check that IndInv is inductive, on small constants *)
(* (SoundGate_indstep.cfg; bounded evidence, not a proof: spec/tlaps/).   *)
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
IndInit ==
  /\ runStatus \in [Runs -> RunStatuses]
  /\ runEpoch  \in [Runs -> 0..(MaxEpoch + 1)]
  /\ \A r \in Runs :
       /\ runStatus[r] \in {"none", "retired"} => runEpoch[r] = 0
       /\ runStatus[r] = "active" => runEpoch[r] \in 1..MaxEpoch
       /\ runStatus[r] \in Final => runEpoch[r] \in 2..(MaxEpoch + 1)
  /\ effStatus \in [Runs -> [Keys -> EffectStatuses]]
  /\ \A r \in Runs, k \in Keys :
       /\ runStatus[r] \in {"none", "retired"} => effStatus[r][k] = "absent"
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
  /\ \A r \in Runs : runStatus[r] # "retired" => doomed[r] = {k \in Keys : effStatus[r][k] = "rejected"}
  /\ admits \in [Runs -> [Keys -> 0..1]]
  /\ admitCtx \in [Runs -> [Keys -> {{}, {GoodCtx}}]]
  /\ IndInv
=============================================================================
