// Package benchstat holds what kumo's bench programs report besides their
// own figures: quantiles of latencies and the machine and load they ran on.
package benchstat

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Quantile q (0 to 1) of ds, sorted in place; 0 when empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(q*float64(len(ds)-1))]
}

// LoadAverage is the 1, 5 and 15 minute load (Linux), for judging the noise.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// Machine names the CPU and core count the figures ran on.
func Machine() string {
	cpu := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kv, _ := exec.Command("uname", "-sr").Output()
	return fmt.Sprintf("%d cores, %s, %s, %s", runtime.NumCPU(), cpu, strings.TrimSpace(string(kv)), runtime.Version())
}
