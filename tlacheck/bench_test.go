package tlacheck

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// benchCheck model-checks spec/cfg b.N times and reports distinct states per second.
func benchCheck(b *testing.B, tlaPath, cfgPath string) {
	if _, err := os.Stat(cfgPath); err != nil {
		b.Skipf("%s not present", cfgPath)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as cmd/tlacheck
	var distinct int64
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := Load(tlaPath, cfgPath)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		before := cpuTime()
		res, err := s.Check(Options{})
		cpu += cpuTime() - before
		if err != nil {
			b.Fatal(err)
		}
		distinct += res.Distinct
	}
	b.ReportMetric(float64(distinct)/b.Elapsed().Seconds(), "distinct/s")
	if cpu > 0 {
		// On a shared machine wall time mostly measures waiting; CPU time does not.
		b.ReportMetric(float64(distinct)/cpu.Seconds(), "distinct/cpu-s")
	}
}

// BenchmarkTwoPhase5 checks two-phase commit with 5 resource managers (8832 states).
func BenchmarkTwoPhase5(b *testing.B) {
	benchCheck(b, "testdata/TwoPhase.tla", "testdata/TwoPhase_big.cfg")
}

// BenchmarkSoundGateKeys3 checks the gate's spec on its keys3 config (7063 states).
func BenchmarkSoundGateKeys3(b *testing.B) {
	benchCheck(b, filepath.Join("..", "spec", "tla", "SoundGate.tla"), filepath.Join("..", "spec", "tla", "SoundGate_keys3.cfg"))
}

// BenchmarkSoundGateDeep checks the gate's deep config, the largest of spec/tla.
func BenchmarkSoundGateDeep(b *testing.B) {
	benchCheck(b, filepath.Join("..", "spec", "tla", "SoundGate.tla"), filepath.Join("..", "spec", "tla", "SoundGate_deep.cfg"))
}
