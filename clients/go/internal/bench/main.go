// Command bench measures the Go client against a bare socket loop, one
// figure per run (bench/clients-bench.sh, make bench).
//
// usage: bench [-cpuprofile FILE] SOCKET URLS SECONDS
//
// A bare loop writes the very line Client.Check writes and reads its
// answer line; the client calls Client.Check, one call at a time. Both
// check the URLs of URLS in turn as Googlebot, in turns of 64 checks, for
// SECONDS (after 0.3 s of warm-up); it prints "bare=CHECKS/S
// client=CHECKS/S bare_cpu_us=US client_cpu_us=US", the last two the CPU
// time the process spent per check in each (on a loaded machine a
// steadier figure than the rates).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	robotsd "robotsd.dev/client"
)

const agent = "Googlebot"

// cpu is the CPU time the process has used, user and system, in seconds.
func cpu() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// block runs step over n URLs from urls[*i] on: the seconds it took and
// the CPU seconds the process used meanwhile.
func block(step func(string) error, urls []string, i *int, n int) (float64, float64, error) {
	t0, c0 := time.Now(), cpu()
	for k := 0; k < n; k, *i = k+1, *i+1 {
		if err := step(urls[*i%len(urls)]); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(t0).Seconds(), cpu() - c0, nil
}

// pair runs the bare loop and the client in turns, 64 checks each, for
// secs seconds after 0.3 s of warm-up, so that both see the same load;
// their checks/s and the CPU microseconds each spent per check.
func pair(bare, client func(string) error, urls []string, secs float64) (rate, cpuUs [2]float64, err error) {
	steps := [2]func(string) error{bare, client}
	var spent, used [2]float64
	i, n := 0, 0
	for warm := time.Now().Add(300 * time.Millisecond); time.Now().Before(warm); {
		for _, st := range steps {
			if _, _, err := block(st, urls, &i, 8); err != nil {
				return rate, cpuUs, err
			}
		}
	}
	for end := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(end); n += 64 {
		for k, st := range steps {
			d, c, err := block(st, urls, &i, 64)
			if err != nil {
				return rate, cpuUs, err
			}
			spent[k] += d
			used[k] += c
		}
	}
	for k := range steps {
		rate[k], cpuUs[k] = float64(n)/spent[k], used[k]*1e6/float64(n)
	}
	return rate, cpuUs, nil
}

func bareStep(path string) (func(string) error, error) {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(nc, 64<<10)
	id := 0
	return func(url string) error {
		id++
		u, _ := json.Marshal(url)
		line := `{"agent":"` + agent + `","id":` + strconv.Itoa(id) + `,"op":"check","url":` + string(u) + "}\n"
		if _, err := nc.Write([]byte(line)); err != nil {
			return err
		}
		_, err := r.ReadSlice('\n')
		return err
	}, nil
}

func clientStep(path string) func(string) error {
	c := robotsd.New(&robotsd.Options{Socket: path})
	ctx := context.Background()
	return func(url string) error {
		_, err := c.Check(ctx, url, agent)
		return err
	}
}

func main() {
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	args := flag.Args()
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bench [-cpuprofile FILE] SOCKET URLS SECONDS")
		os.Exit(2)
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	urls := strings.Fields(string(data))
	secs, _ := strconv.ParseFloat(args[2], 64)
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	bare, err := bareStep(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	rate, us, err := pair(bare, clientStep(args[0]), urls, secs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("bare=%.0f client=%.0f bare_cpu_us=%.1f client_cpu_us=%.1f\n",
		rate[0], rate[1], us[0], us[1])
}
