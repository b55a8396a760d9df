-------------------------- MODULE SoundGateProofs --------------------------
(***************************************************************************)
(* NOT CHECKED BY TLAPS. This is the TLAPS proof text of the inductive     *)
(* invariant of spec/tla/SoundGate.tla. TLAPS (tlapm and its back-ends,    *)
(* Zenon and Isabelle) is not packaged for and cannot be installed on the  *)
(* machines of this project, so no TLAPS prover has read this file: it may *)
(* contain steps tlapm would not accept as written (missing DEF hints, a   *)
(* step to split further).                                                 *)
(* SANY 2.2 (from the TLC 2.20 jar) parses and level-checks it, with a     *)
(* local stand-in for the TLAPS module (PTL == TRUE etc.); that checks the  *)
(* syntax and the names, nothing of the reasoning.                         *)
(*                                                                         *)
(* What IS checked (docs/verify/smt.md, "The proof text"):                 *)
(*  - Each numbered top-level step <1>k of a theorem has, on the lines     *)
(*    after its statement, a "\* smt:" comment: the SMT obligations of     *)
(*    tlacheck/smt that discharge it, or "stuttering" (CASE UNCHANGED      *)
(*    vars: no obligation), or "theorem T" (the step is theorem T).        *)
(*    go test ./tlacheck/smt and make verify-tla-smt hold the comments     *)
(*    against the obligation generator: obligations of the theorem's kind, *)
(*    of the step's action, concluding exactly what the step claims;       *)
(*    every obligation named by one step. z3 and cvc5 prove every          *)
(*    obligation for any number of runs and keys and every MaxEpoch, over  *)
(*    the project's own translation into SMT-LIB. That checks the claim of *)
(*    each step, not the reasoning written under it (BY hints, <2> steps,  *)
(*    lemmas), nor the PTL step of SpecSafe.                               *)
(*  - By model checking on small constants (docs/verify/spec.md): Init =>  *)
(*    IndInv on every config; IndInv /\ Next => IndInv' and IndInv =>      *)
(*    Safety /\ Structure on every IndInv state of SoundGate_indstep.cfg   *)
(*    (one run, two keys, MaxEpoch 2).                                     *)
(*                                                                         *)
(* The obligations, as issue 4 names them:                                 *)
(*   InitIndInv   Init => IndInv                                           *)
(*   StepIndInv   IndInv /\ [Next]_vars => IndInv'                         *)
(*   IndInvSafe   IndInv => TypeOK /\ Safety /\ Structure                  *)
(*   SpecSafe     Spec => [](Safety /\ Structure)                          *)
(***************************************************************************)
EXTENDS SoundGate, TLAPS

USE DEF RunStatuses, EffectStatuses, Decisions, Outcomes, Epochs, Final, Live


-----------------------------------------------------------------------------
(* Init => IndInv: every run is "none", every effect absent with its fields *)
(* cleared, every history empty; each conjunct of IndInv holds by          *)
(* evaluation.                                                             *)
THEOREM InitIndInv == Init => IndInv
  <1> SUFFICES ASSUME Init PROVE IndInv
      OBVIOUS
  <1>1. TypeOK
        \* smt: Init__TypeOK
        BY DEF Init, TypeOK, AdmitContexts
  <1>2. RunShape
        \* smt: Init__RunShape
        BY DEF Init, RunShape
  <1>3. EffectShape
        \* smt: Init__EffectShape
        BY DEF Init, EffectShape
  <1>4. HistoryShape
        \* smt: Init__HistoryShape
        \* no effect is admitted, completed or rejected; all histories are empty
        BY DEF Init, HistoryShape
  <1>5. Structure
        \* smt: Init__NoOrphanHold, Init__PendingExact, Init__CurrentEpoch
        BY DEF Init, Structure, NoOrphanHold, PendingExact, CurrentEpoch
  <1> QED
      BY <1>1, <1>2, <1>3, <1>4, <1>5 DEF IndInv

-----------------------------------------------------------------------------
(* IndInv => TypeOK /\ Safety /\ Structure. TypeOK and Structure are      *)
(* conjuncts of IndInv. HistoryShape pins each admitCtx[r][k] to {} or     *)
(* {GoodCtx} and each admits[r][k] to 0 or 1; GoodCtx has an empty pending *)
(* set, doomed FALSE, status "active" and current TRUE.                    *)
THEOREM IndInvSafe == IndInv => TypeOK /\ Safety /\ Structure
  <1> SUFFICES ASSUME IndInv PROVE TypeOK /\ Safety /\ Structure
      OBVIOUS
  <1>1. TypeOK
        \* smt: IndInv__TypeOK
        BY DEF IndInv
  <1>2. Safety
        \* smt: IndInv__P1, IndInv__P2, IndInv__P3, IndInv__P4
        <2>1. \A r \in Runs, k \in Keys : admitCtx[r][k] \subseteq {GoodCtx} /\ admits[r][k] <= 1
              BY DEF IndInv, HistoryShape
        <2>2. P1
              BY <2>1 DEF P1, GoodCtx
        <2>3. P2
              BY <2>1 DEF P2, GoodCtx
        <2>4. P3
              BY <2>1 DEF P3
        <2>5. P4
              BY <2>1 DEF P4, GoodCtx
        <2> QED
            BY <2>2, <2>3, <2>4, <2>5 DEF Safety
  <1>3. Structure
        \* smt: IndInv__NoOrphanHold, IndInv__PendingExact, IndInv__CurrentEpoch
        BY DEF IndInv
  <1> QED
      BY <1>1, <1>2, <1>3

-----------------------------------------------------------------------------
(* Two facts used by several actions.                                      *)

(* Dropping a run's held and released effects back to absent (Cancel,     *)
(* Fence, Timeout) leaves no live effect in r, clears epochs and gated     *)
(* flags, clears approved exactly on the dropped effects, and keeps        *)
(* admitted, completed and rejected effects as they were.                  *)
LEMMA DropShape ==
  ASSUME IndInv, NEW r \in Runs
  PROVE  /\ \A k \in Keys : ~Live(DropStatus(r)[r][k])
         /\ \A k \in Keys : DropStatus(r)[r][k] \in {"admitted", "completed", "rejected"}
                              <=> effStatus[r][k] \in {"admitted", "completed", "rejected"}
         /\ \A k \in Keys : DropStatus(r)[r][k] \in {"admitted", "completed", "rejected"}
                              => DropStatus(r)[r][k] = effStatus[r][k]
         /\ \A k \in Keys : DropEpoch(r)[r][k] = 0 /\ DropGated(r)[r][k] = FALSE
         /\ \A k \in Keys : DropStatus(r)[r][k] \in {"absent", "rejected"} => ~DropApproved(r)[r][k]
         /\ \A s \in Runs \ {r} : /\ DropStatus(r)[s] = effStatus[s]
                                  /\ DropEpoch(r)[s] = effEpoch[s]
                                  /\ DropGated(r)[s] = gated[s]
                                  /\ DropApproved(r)[s] = approved[s]
  BY DEF DropStatus, DropEpoch, DropGated, DropApproved, IndInv, TypeOK, EffectShape

(* The history depends on the gate's state only: if the gate's variables    *)
(* keep IndInv's shape and no effect enters or leaves the admitted,        *)
(* completed or rejected statuses, an unchanged history keeps              *)
(* HistoryShape. Used by Open, Complete, Cancel, Fence and Timeout.        *)
LEMMA HistoryKept ==
  ASSUME IndInv, UNCHANGED histVars,
         \A s \in Runs, k \in Keys :
            /\ effStatus'[s][k] \in {"admitted", "completed"} <=> effStatus[s][k] \in {"admitted", "completed"}
            /\ effStatus'[s][k] = "rejected" <=> effStatus[s][k] = "rejected"
  PROVE  HistoryShape'
  BY DEF IndInv, HistoryShape, histVars

-----------------------------------------------------------------------------
(* IndInv /\ [Next]_vars => IndInv': one case per action.                  *)
THEOREM StepIndInv == IndInv /\ [Next]_vars => IndInv'
  <1> SUFFICES ASSUME IndInv, [Next]_vars PROVE IndInv'
      OBVIOUS
  <1> USE DEF IndInv
  <1>0. CASE UNCHANGED vars
        \* smt: stuttering
        BY <1>0 DEF vars, TypeOK, RunShape, EffectShape, HistoryShape, Structure,
                    NoOrphanHold, PendingExact, CurrentEpoch, GoodCtx

  <1>1. ASSUME NEW r \in Runs, Open(r) PROVE IndInv'
        \* smt: Open__TypeOK, Open__RunShape, Open__EffectShape, Open__HistoryShape,
        \*      Open__NoOrphanHold, Open__PendingExact, Open__CurrentEpoch
        \* Only a "none" run changes: it becomes active at epoch 1 with every
        \* effect absent (RunShape of a "none" run), so no effect is live and
        \* pending stays {}; 1 \in 1..MaxEpoch by ASSUME MaxEpoch >= 1.
        <2>1. CASE runStatus[r] = "none"
              <3>1. TypeOK' /\ RunShape' /\ EffectShape'
                    BY <1>1, <2>1 DEF Open, TypeOK, RunShape, EffectShape
              <3>2. HistoryShape'
                    BY <1>1, <2>1, HistoryKept DEF Open
              <3>3. Structure'
                    \* r has no held effect; other runs are unchanged
                    BY <1>1, <2>1 DEF Open, RunShape, Structure, NoOrphanHold, PendingExact, CurrentEpoch
              <3> QED BY <3>1, <3>2, <3>3
        <2>2. CASE runStatus[r] # "none"
              BY <1>1, <2>2, <1>0 DEF Open
        <2> QED BY <2>1, <2>2

  <1>2. ASSUME NEW r \in Runs, NEW k \in Keys, NEW e \in Epochs, NEW g \in BOOLEAN,
               Admit(r, k, e, g)
        PROVE  IndInv'
        \* smt: Admit__TypeOK, Admit__RunShape, Admit__EffectShape, Admit__HistoryShape,
        \*      Admit__NoOrphanHold, Admit__PendingExact, Admit__CurrentEpoch
        <2> DEFINE a == AdmitAnswer(r, k, e, g)
        <2>0. a.answer # "error"
              BY <1>2 DEF Admit
        <2>1. CASE a.answer = "admit"
              \* By the IF chain: r is active, e = runEpoch[r], k is absent or
              \* released (not admitted/completed/rejected/held), and, k being
              \* absent only if not gated, pending[r] = {}. k is not doomed
              \* because doomed[r] is the set of rejected keys (HistoryShape).
              \* Hence Ctx(r, k, e) = GoodCtx, and admits[r][k] = 0,
              \* admitCtx[r][k] = {} since k was neither admitted nor completed.
              <3>1. /\ runStatus[r] = "active"
                    /\ e = runEpoch[r]
                    /\ pending[r] = {}
                    /\ effStatus[r][k] \in {"absent", "released"}
                    BY <2>1 DEF AdmitAnswer, Ans, Denied, Err
              <3>2. k \notin doomed[r]
                    BY <3>1 DEF HistoryShape
              <3>3. Ctx(r, k, e) = GoodCtx
                    BY <3>1, <3>2 DEF Ctx, GoodCtx
              <3>4. admits[r][k] = 0 /\ admitCtx[r][k] = {}
                    BY <3>1 DEF HistoryShape
              <3>5. TypeOK' /\ RunShape' /\ EffectShape'
                    \* k becomes admitted with epoch 0 and gated FALSE; approved and
                    \* outcome unchanged ("none" since k was not completed)
                    BY <1>2, <2>1, <3>1 DEF Admit, TypeOK, RunShape, EffectShape, AdmitContexts
              <3>6. HistoryShape'
                    BY <1>2, <2>1, <3>3, <3>4 DEF Admit, HistoryShape
              <3>7. Structure'
                    \* k leaves released or absent (not held, not pending): pending,
                    \* the held effects and the live epochs of r are otherwise unchanged
                    BY <1>2, <2>1, <3>1 DEF Admit, Structure, NoOrphanHold, PendingExact, CurrentEpoch
              <3> QED BY <3>5, <3>6, <3>7
        <2>2. CASE a.answer = "held" /\ effStatus[r][k] = "absent"
              \* r is active, e = runEpoch[r] (the chain passed the epoch tests);
              \* k becomes held at epoch e with gated g. If g, k joins pending
              \* (held, gated, not approved: absent effects are not approved by
              \* EffectShape). If ~g, the chain reached "pending[r] # {}", so the
              \* held k has a pending approval (NoOrphanHold).
              <3>1. runStatus[r] = "active" /\ e = runEpoch[r] /\ ~approved[r][k]
                    BY <2>2 DEF AdmitAnswer, Ans, Denied, Err, EffectShape
              <3>2. ~g => pending[r] # {}
                    BY <2>2 DEF AdmitAnswer, Ans, Denied, Err
              <3>3. TypeOK' /\ RunShape' /\ EffectShape'
                    BY <1>2, <2>2, <3>1 DEF Admit, TypeOK, RunShape, EffectShape
              <3>4. HistoryShape'
                    BY <1>2, <2>2 DEF Admit, HistoryShape, histVars
              <3>5. NoOrphanHold'
                    BY <1>2, <2>2, <3>1, <3>2 DEF Admit, NoOrphanHold
              <3>6. PendingExact'
                    BY <1>2, <2>2, <3>1 DEF Admit, PendingExact
              <3>7. CurrentEpoch'
                    BY <1>2, <2>2, <3>1 DEF Admit, CurrentEpoch
              <3> QED BY <3>3, <3>4, <3>5, <3>6, <3>7 DEF Structure
        <2>3. CASE ~(a.answer = "admit") /\ ~(a.answer = "held" /\ effStatus[r][k] = "absent")
              BY <1>2, <2>0, <2>3, <1>0 DEF Admit
        <2> QED BY <2>1, <2>2, <2>3

  <1>3. ASSUME NEW r \in Runs, NEW k \in Keys, NEW d \in Decisions, Decide(r, k, d)
        PROVE  IndInv'
        \* smt: Decide__TypeOK, Decide__RunShape, Decide__EffectShape, Decide__HistoryShape,
        \*      Decide__NoOrphanHold, Decide__PendingExact, Decide__CurrentEpoch
        <2>1. CASE DecideAnswer(r, k, d) = "repeat"
              BY <1>3, <2>1, <1>0 DEF Decide
        <2>2. CASE DecideAnswer(r, k, d) = "decided"
              \* k \in pending[r], so by PendingExact k is held, gated, not
              \* approved, and by NoOrphanHold r is active.
              <3>1. /\ k \in pending[r]
                    /\ effStatus[r][k] = "held" /\ gated[r][k] /\ ~approved[r][k]
                    /\ runStatus[r] = "active"
                    BY <2>2 DEF DecideAnswer, PendingExact, NoOrphanHold
              <3>2. CASE d = "reject"
                    \* rej = the held effects of r that are not (gated /\ approved);
                    \* k \in rej. pending' = {}. The held effects left after step 3
                    \* are gated and approved; step 4 releases them, so r has no held
                    \* effect: NoOrphanHold' and PendingExact' hold for r. Released
                    \* gated effects are approved (EffectShape'). Rejected effects
                    \* have epoch 0, gated FALSE and (being not approved, or not
                    \* gated hence not approved) approved FALSE. doomed' adds exactly
                    \* rej (k \in rej), so doomed'[r] is the set of rejected keys.
                    \* Released effects keep their epoch = runEpoch[r] (CurrentEpoch').
                    \* No effect becomes admitted or completed: admits, admitCtx keep
                    \* their shape.
                    BY <1>3, <2>2, <3>1, <3>2
                       DEF Decide, TypeOK, RunShape, EffectShape, HistoryShape, Structure,
                           NoOrphanHold, PendingExact, CurrentEpoch
              <3>3. CASE d = "approve"
                    \* pending' = pending \ {k}, approved'[r][k] = TRUE (k is held and
                    \* gated: EffectShape' allows it). If pending' # {}, the held
                    \* effects stay held and keep a pending approval; pending' is the
                    \* undecided gated held effects (k left it by becoming approved).
                    \* If pending' = {}, every gated held effect is approved, and step
                    \* 4 releases every held effect: no held effect remains, released
                    \* gated ones are approved. No effect is rejected, admitted or
                    \* completed; doomed unchanged.
                    BY <1>3, <2>2, <3>1, <3>3
                       DEF Decide, TypeOK, RunShape, EffectShape, HistoryShape, Structure,
                           NoOrphanHold, PendingExact, CurrentEpoch
              <3> QED BY <3>2, <3>3
        <2> QED BY <1>3, <2>1, <2>2 DEF Decide

  <1>4. ASSUME NEW r \in Runs, NEW k \in Keys, NEW o \in Outcomes, Complete(r, k, o)
        PROVE  IndInv'
        \* smt: Complete__TypeOK, Complete__RunShape, Complete__EffectShape, Complete__HistoryShape,
        \*      Complete__NoOrphanHold, Complete__PendingExact, Complete__CurrentEpoch
        <2>1. CASE CompleteAnswer(r, k, o) = "repeat"
              BY <1>4, <2>1, <1>0 DEF Complete
        <2>2. CASE CompleteAnswer(r, k, o) = "completed"
              \* k goes from admitted to completed with outcome o # "none"; both are
              \* in {"admitted", "completed"}, so the history keeps its shape; k was
              \* not live, so Structure is untouched.
              <3>1. effStatus[r][k] = "admitted"
                    BY <2>2 DEF CompleteAnswer
              <3>2. HistoryShape'
                    BY <1>4, <2>2, <3>1, HistoryKept DEF Complete
              <3> QED
                  BY <1>4, <2>2, <3>1, <3>2
                     DEF Complete, TypeOK, RunShape, EffectShape, Structure,
                         NoOrphanHold, PendingExact, CurrentEpoch
        <2> QED BY <1>4, <2>1, <2>2 DEF Complete

  <1>5. ASSUME NEW r \in Runs, Cancel(r) PROVE IndInv'
        \* smt: Cancel__TypeOK, Cancel__RunShape, Cancel__EffectShape, Cancel__HistoryShape,
        \*      Cancel__NoOrphanHold, Cancel__PendingExact, Cancel__CurrentEpoch
        <2>1. CASE runStatus[r] = "none"
              \* tombstone: cancelled at epoch 2 \in 2..MaxEpoch+1 (MaxEpoch >= 1);
              \* r had no effect other than absent (RunShape), pending {}.
              BY <1>5, <2>1, HistoryKept
                 DEF Cancel, TypeOK, RunShape, EffectShape, Structure,
                     NoOrphanHold, PendingExact, CurrentEpoch
        <2>2. CASE runStatus[r] = "active"
              \* epoch+1 \in 2..MaxEpoch+1; DropShape: no live effect in r, flags
              \* cleared, admitted/completed/rejected kept; pending' = {}.
              BY <1>5, <2>2, DropShape, HistoryKept
                 DEF Cancel, TypeOK, RunShape, EffectShape, Structure,
                     NoOrphanHold, PendingExact, CurrentEpoch
        <2>3. CASE runStatus[r] \in Final
              BY <1>5, <2>3, <1>0 DEF Cancel
        <2> QED BY <2>1, <2>2, <2>3 DEF TypeOK

  <1>6. ASSUME NEW r \in Runs, Fence(r) PROVE IndInv'
        \* smt: Fence__TypeOK, Fence__RunShape, Fence__EffectShape, Fence__HistoryShape,
        \*      Fence__NoOrphanHold, Fence__PendingExact, Fence__CurrentEpoch
        \* r is active with runEpoch[r] < MaxEpoch, so epoch+1 \in 1..MaxEpoch.
        \* DropShape as for Cancel; pending' = {} and no held effect remains.
        <2>1. runStatus[r] = "active" /\ runEpoch[r] < MaxEpoch
              BY <1>6 DEF Fence, FenceAnswer
        <2> QED
            BY <1>6, <2>1, DropShape, HistoryKept
               DEF Fence, TypeOK, RunShape, EffectShape, Structure,
                   NoOrphanHold, PendingExact, CurrentEpoch

  <1>7. ASSUME NEW r \in Runs, Timeout(r) PROVE IndInv'
        \* smt: Timeout__TypeOK, Timeout__RunShape, Timeout__EffectShape, Timeout__HistoryShape,
        \*      Timeout__NoOrphanHold, Timeout__PendingExact, Timeout__CurrentEpoch
        \* as Cancel of an active run, with status timed_out
        BY <1>7, DropShape, HistoryKept
           DEF Timeout, TypeOK, RunShape, EffectShape, Structure,
               NoOrphanHold, PendingExact, CurrentEpoch

  <1>8. ASSUME NEW r \in Runs, Retire(r) PROVE IndInv'
        \* smt: Retire__TypeOK, Retire__RunShape, Retire__EffectShape, Retire__HistoryShape,
        \*      Retire__NoOrphanHold, Retire__PendingExact, Retire__CurrentEpoch
        \* r is Finished, so it is active or final: pending[r] = {} (final, by
        \* RunShape; active, since every effect is absent, completed or rejected and
        \* PendingExact). After the step r is retired at epoch 0 with every effect
        \* absent, flags cleared, outcome "none": RunShape's retired conjunct and
        \* EffectShape hold. The history is unchanged: before the step admits[r][k]
        \* was 1 with admitCtx {GoodCtx} or 0 with {} (HistoryShape of a run that is
        \* not retired), which is HistoryShape's retired case. Other runs keep theirs.
        <2>1. runStatus[r] \in Final \/ runStatus[r] = "active"
              BY <1>8 DEF Retire, Finished
        <2>2. pending[r] = {}
              BY <1>8, <2>1 DEF Retire, Finished, RunShape, PendingExact
        <2> QED
            BY <1>8, <2>1, <2>2
               DEF Retire, Finished, TypeOK, RunShape, EffectShape, HistoryShape,
                   Structure, NoOrphanHold, PendingExact, CurrentEpoch

  <1> QED
      BY <1>0, <1>1, <1>2, <1>3, <1>4, <1>5, <1>6, <1>7, <1>8 DEF Next

-----------------------------------------------------------------------------
THEOREM SpecSafe == Spec => [](Safety /\ Structure)
  <1>1. Init => IndInv
        \* smt: theorem InitIndInv
        BY InitIndInv
  <1>2. IndInv /\ [Next]_vars => IndInv'
        \* smt: theorem StepIndInv
        BY StepIndInv
  <1>3. IndInv => TypeOK /\ Safety /\ Structure
        \* smt: theorem IndInvSafe
        BY IndInvSafe
  <1> QED
      BY <1>1, <1>2, <1>3, PTL DEF Spec
=============================================================================
