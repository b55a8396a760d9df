---- MODULE BrokenWALAckBeforeSync ----
(***************************************************************************)
(* DELIBERATELY BROKEN copy of WAL.tla: TLC MUST FIND A VIOLATION         *)
(* (exit 12). Mutation: WaitDurable returns nil once a record is written, before its fdatasync. *)
(* The gate's write-ahead log (impl/wal) as a state machine: the           *)
(* durability argument of impl/wal/doc.go and docs/wal.md, transcribed.    *)
(*                                                                         *)
(* A record goes through three places: the log's memory (Append gives it   *)
(* the next LSN and does no I/O), the file system's page cache (Write:     *)
(* one WriteAt of a batch, or of a chunk of one), and the disk (Sync: one  *)
(* fdatasync makes everything written durable, however many records: the  *)
(* group commit). Ack is a WaitDurable that returns nil. Crash is a        *)
(* machine crash as walfs.FaultFS plays it: the disk keeps what was        *)
(* synced and a prefix, in order, of what was written since, the last      *)
(* record kept possibly cut short (torn); a process killed is the crash    *)
(* that keeps everything written. Recover is wal.Open and Replay: every    *)
(* record's checksum is verified, a torn tail is cut, a damaged record     *)
(* anywhere else is refused. Snapshot, SyncDir and Compact are a           *)
(* snapshot's rename, the directory fsync that makes it durable, and the   *)
(* removal of what it covers. Fail is any failed write or fdatasync: the   *)
(* log is failed until the next Open. Corrupt is not the log's: a bit flip *)
(* on the disk, the one damage a crash cannot leave.                       *)
(*                                                                         *)
(* Abstracted away: bytes, segments and their files (a record is one slot; *)
(* compaction drops the oldest covered record, which a segment boundary    *)
(* makes a run of records), reserved zeros after the last record (the      *)
(* clean end), the snapshot's state (a snapshot is its LSN: crashsim       *)
(* checks that its state is the records' it covers), concurrency inside    *)
(* the log (leader and committer: each step is one of their I/Os), and a   *)
(* crash during Open (Open is one step). docs/verify/wal.md, "The log's    *)
(* spec", says why each is safe to leave out, and what it costs.           *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

(* Sequences, written out: the standard module's Append would clash with   *)
(* the log's Append, the action below. A sequence grows by f @@ (n :> x),  *)
(* which copies no element one at a time: trace validation appends to      *)
(* sequences of hundreds of records.                                       *)
Len(s) == Cardinality(DOMAIN s)
SubSeq(s, m, n) == [i \in 1..(n - m + 1) |-> s[i + m - 1]]
IsSeq(s, S) == DOMAIN s = 1..Len(s) /\ \A i \in DOMAIN s : s[i] \in S

CONSTANTS Data,       \* payloads a record can carry (model values)
          MaxLSN,     \* Append is enabled while fewer records exist
          MaxCrashes  \* Crash is enabled while fewer crashes happened

ASSUME MaxLSN \in Nat /\ MaxCrashes \in Nat

Torn == "torn"     \* on disk: a record a crash cut short (fails its checksum)
Bad  == "bad"      \* on disk: a complete record with a flipped bit
Phases == {"up", "down", "refused"}

VARIABLES
  phase,     \* "up": open; "down": crashed, not yet opened; "refused": Open refused the log
  hist,      \* hist[i]: the payload appended at LSN i (history: what the properties compare with)
  last,      \* the last LSN appended or recovered (Log.Last)
  written,   \* records 1..written were handed to the file (page cache or disk)
  disk,      \* disk[i]: what stable storage holds at LSN i: a payload, Torn or Bad
  acked,     \* the highest LSN whose WaitDurable returned nil (every one below is durable too)
  failed,    \* the log's sticky *FailedError
  snap,      \* LSN of the snapshot whose directory entry is durable (0: none)
  snapNew,   \* LSN of the newest snapshot renamed into place (snap once its entry is durable)
  from,      \* the first LSN still on disk: compaction removed the records below it
  crashes,   \* crashes so far
  recovery   \* what the last Open replayed: the snapshot, the records after it, and
             \* the acknowledged LSN at that moment (history)

vars == <<phase, hist, last, written, disk, acked, failed, snap, snapNew, from,
          crashes, recovery>>

Max(a, b) == IF a > b THEN a ELSE b
Min(a, b) == IF a < b THEN a ELSE b
Durable == Len(disk)   \* the records on stable storage are 1..Durable

Init ==
  /\ phase = "up"
  /\ hist = <<>>
  /\ last = 0
  /\ written = 0
  /\ disk = <<>>
  /\ acked = 0
  /\ failed = FALSE
  /\ snap = 0
  /\ snapNew = 0
  /\ from = 1
  /\ crashes = 0
  /\ recovery = [snap |-> 0, recs |-> <<>>, acked |-> 0]

(* Log.Append: the next LSN, in memory only. A crash forgets the records    *)
(* after the last recovered one (Recover), so an LSN may be appended again. *)
Append(d) ==
  /\ phase = "up"
  /\ ~failed
  /\ last < MaxLSN
  /\ d \in Data
  /\ hist' = hist @@ (last + 1 :> d)
  /\ last' = last + 1
  /\ UNCHANGED <<phase, written, disk, acked, failed, snap, snapNew, from, crashes, recovery>>

(* One WriteAt of the leader or the committer: the records up to n, in the *)
(* page cache, not durable.                                                 *)
Write(n) ==
  /\ phase = "up"
  /\ ~failed
  /\ written < n /\ n <= last
  /\ written' = n
  /\ UNCHANGED <<phase, hist, last, disk, acked, failed, snap, snapNew, from, crashes, recovery>>

(* One fdatasync of a segment: everything written is durable. The log      *)
(* writes to one segment between two of them (it syncs a segment before it *)
(* creates the next), so one Sync covers every record written.              *)
Sync ==
  /\ phase = "up"
  /\ ~failed
  /\ disk' = disk @@ [i \in (Durable + 1)..written |-> hist[i]]
  /\ UNCHANGED <<phase, hist, last, written, acked, failed, snap, snapNew, from, crashes, recovery>>

(* WaitDurable(n) returns nil: only for a record on stable storage, also   *)
(* when the log has failed since.                                          *)
Ack(n) ==
  /\ phase = "up"
  /\ 1 <= n /\ n <= written
  /\ acked' = Max(acked, n)
  /\ UNCHANGED <<phase, hist, last, written, disk, failed, snap, snapNew, from, crashes, recovery>>

(* A failed write or fdatasync (or a segment creation, a directory sync, a *)
(* snapshot's I/O): the log appends, writes and syncs nothing more. What   *)
(* was written and not synced may be lost (the kernel may drop the dirty   *)
(* pages): the next Crash decides. Nothing is retried.                     *)
Fail ==
  /\ phase = "up"
  /\ ~failed
  /\ failed' = TRUE
  /\ UNCHANGED <<phase, hist, last, written, disk, acked, snap, snapNew, from, crashes, recovery>>

(* Log.Snapshot(upto): BeginSnapshot waits until upto is durable; the      *)
(* state goes to a tmp file, fdatasynced, renamed into place. Its          *)
(* directory entry is not durable yet: a crash may keep the older one.     *)
(* Snapshots are serialised: the previous one's directory sync came first. *)
Snapshot(upto) ==
  /\ phase = "up"
  /\ ~failed
  /\ snapNew = snap
  /\ snap < upto /\ upto <= Durable
  /\ snapNew' = upto
  /\ UNCHANGED <<phase, hist, last, written, disk, acked, failed, snap, from, crashes, recovery>>

(* A directory fsync (after a snapshot's rename, a segment's creation, a   *)
(* compaction): the renamed snapshot's entry is durable.                   *)
SyncDir ==
  /\ phase = "up"
  /\ snap' = snapNew
  /\ UNCHANGED <<phase, hist, last, written, disk, acked, failed, snapNew, from, crashes, recovery>>

(* Compaction after a snapshot: the oldest record on disk goes, if the     *)
(* durable snapshot covers it. (A segment holds a run of records; Open     *)
(* finishes a compaction a crash interrupted, so the removals need no      *)
(* durability of their own.)                                               *)
Compact ==
  /\ phase = "up"
  /\ from <= snap
  /\ from' = from + 1
  /\ UNCHANGED <<phase, hist, last, written, disk, acked, failed, snap, snapNew, crashes, recovery>>

(* A bit flips in a record on the disk (not a crash: the damage Open must  *)
(* refuse). At most one damaged record at a time.                          *)
Corrupt(i) ==
  /\ phase \in {"up", "down"}
  /\ from <= i /\ i <= Durable
  /\ disk[i] \in Data
  /\ \A j \in 1..Durable : disk[j] # Bad
  /\ disk' = [disk EXCEPT ![i] = Bad]
  /\ UNCHANGED <<phase, hist, last, written, acked, failed, snap, snapNew, from, crashes, recovery>>

(* The machine stops. The disk keeps what was synced and the first k - Durable *)
(* records written since, in order, and maybe the next one cut short (the  *)
(* page cache is written back in order: FaultFS keeps a prefix of the      *)
(* unsynced writes, the last one possibly cut). A renamed snapshot whose   *)
(* entry was not synced may be kept or lost.                               *)
Crash ==
  /\ phase = "up"
  /\ crashes < MaxCrashes
  /\ \E k \in Durable..written, torn \in BOOLEAN, s \in {snap, snapNew} :
       /\ torn => k < written
       /\ disk' = disk @@ [i \in (Durable + 1)..k |-> hist[i]] @@ (IF torn THEN (k + 1 :> Torn) ELSE <<>>)
       /\ snap' = s
       /\ snapNew' = s
  /\ phase' = "down"
  /\ crashes' = crashes + 1
  /\ last' = 0
  /\ written' = 0
  /\ failed' = FALSE
  /\ UNCHANGED <<hist, acked, from, recovery>>

(* wal.Open and Replay. A torn last record is cut (and the cut synced).    *)
(* Refused: a record that does not verify and is not the torn tail, a      *)
(* first record after a gap behind the snapshot, a log that ends before    *)
(* its snapshot. Otherwise the snapshot is replayed, then every record     *)
(* after it; everything read is durable (Open syncs the active segment).   *)
(* The records the crash lost are forgotten: hist keeps what was replayed.  *)
Recover ==
  /\ phase = "down"
  /\ LET n0  == Len(disk)
         cut == n0 > 0 /\ disk[n0] = Torn
         d   == IF cut THEN SubSeq(disk, 1, n0 - 1) ELSE disk
         n   == Len(d)
     IN  IF \/ \E i \in from..n : d[i] \notin Data
            \/ from > snap + 1
            \/ n < snap
         THEN /\ phase' = "refused"
              /\ UNCHANGED <<hist, last, written, disk, acked, failed, snap, snapNew, from, crashes, recovery>>
         ELSE /\ phase' = "up"
              /\ disk' = d
              /\ last' = n
              /\ written' = n
              \* (Min: a record beyond what was appended stays visible to NoInvention.)
              /\ hist' = SubSeq(hist, 1, Min(n, Len(hist)))
              /\ recovery' = [snap |-> snap, recs |-> [i \in (snap + 1)..n |-> d[i]], acked |-> acked]
              /\ UNCHANGED <<acked, failed, snap, snapNew, from, crashes>>

Next ==
  \/ \E d \in Data : Append(d)
  \/ \E n \in 1..MaxLSN : Write(n)
  \/ Sync
  \/ \E n \in 1..MaxLSN : Ack(n)
  \/ Fail
  \/ \E n \in 1..MaxLSN : Snapshot(n)
  \/ SyncDir
  \/ Compact
  \/ \E i \in 1..MaxLSN : Corrupt(i)
  \/ Crash
  \/ Recover

Spec == Init /\ [][Next]_vars

(* Payloads are interchangeable: no action or property names one.          *)
Symmetry == Permutations(Data)

-----------------------------------------------------------------------------
(* Types. *)
Slots == Data \cup {Torn, Bad}

TypeOK ==
  /\ phase \in Phases
  /\ IsSeq(hist, Data) /\ Len(hist) <= MaxLSN
  /\ last \in 0..Len(hist)
  /\ phase = "up" => last = Len(hist)
  /\ written \in 0..last
  /\ IsSeq(disk, Slots) /\ Len(disk) <= MaxLSN
  /\ phase = "up" => Durable <= written
  /\ acked \in 0..MaxLSN
  /\ failed \in BOOLEAN
  /\ snap \in 0..MaxLSN
  /\ snapNew \in snap..MaxLSN
  /\ from \in 1..(MaxLSN + 1)
  /\ crashes \in 0..MaxCrashes
  /\ recovery.snap \in 0..MaxLSN
  /\ recovery.acked \in 0..MaxLSN
  /\ DOMAIN recovery.recs \subseteq 1..MaxLSN
  /\ \A i \in DOMAIN recovery.recs : recovery.recs[i] \in Slots

-----------------------------------------------------------------------------
(* The properties: after every recovery (recovery holds the last one's      *)
(* result, and hist what was appended before it, up to the last record     *)
(* replayed, which the next records follow)...                             *)

(* ... no acknowledged record is lost: each is covered by the snapshot or  *)
(* replayed.                                                               *)
NoLoss ==
  LET replayed == DOMAIN recovery.recs IN
  \A i \in 1..recovery.acked : i <= recovery.snap \/ i \in replayed

(* ... and no record is invented: the snapshot covers records that were    *)
(* appended, the records replayed follow it without a gap, and each is the *)
(* payload appended at its LSN: the replay is a prefix of what was         *)
(* appended, in order.                                                     *)
NoInvention ==
  LET replayed == DOMAIN recovery.recs
      end      == recovery.snap + Len(recovery.recs)
  IN  /\ end <= Len(hist)
      /\ replayed = (recovery.snap + 1)..end
      /\ \A i \in replayed : recovery.recs[i] = hist[i]

(* A record is acknowledged only once it is on stable storage (the local   *)
(* reason for NoLoss).                                                     *)
AckedDurable == acked <= Durable

(* Open refuses only damage a crash cannot leave: a log that only crashed  *)
(* always opens.                                                           *)
RefusesOnlyDamage ==
  phase = "refused" => \E i \in from..Durable : disk[i] = Bad

-----------------------------------------------------------------------------
(* Not a step of the log. Trace validation (internal/waltrace) takes it     *)
(* after each recovery, so that its states stay small over thousands of    *)
(* crashes: LSNs are counted from the snapshot, and the records it covers  *)
(* are forgotten. From such a state the log's steps are those of the       *)
(* original, renumbered, except Compact and Corrupt of a record the        *)
(* snapshot covers, which the traces never take.                           *)
Renumber ==
  LET b == snap IN
  /\ phase = "up"
  /\ recovery.snap = snap
  /\ snapNew = snap
  /\ hist' = SubSeq(hist, b + 1, Len(hist))
  /\ disk' = SubSeq(disk, b + 1, Len(disk))
  /\ last' = last - b
  /\ written' = written - b
  /\ acked' = IF acked > b THEN acked - b ELSE 0
  /\ snap' = 0
  /\ snapNew' = 0
  /\ from' = IF from > b THEN from - b ELSE 1
  /\ recovery' = [snap |-> 0,
                  recs |-> [i \in {j - b : j \in DOMAIN recovery.recs} |-> recovery.recs[i + b]],
                  acked |-> IF recovery.acked > b THEN recovery.acked - b ELSE 0]
  /\ UNCHANGED <<phase, failed, crashes>>
=============================================================================
