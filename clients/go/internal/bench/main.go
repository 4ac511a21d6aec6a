// Command bench measures the Go client against a bare socket loop, one
// figure per run (bench/clients-bench.sh, make bench).
//
// usage: bench [-cpuprofile FILE] MODE SOCKET URLS SECONDS
//
// MODE bare: write the very line Client.Check writes and read its answer
// line; client: Client.Check, one call at a time. Both check the URLs of
// URLS in turn as Googlebot for SECONDS (after 0.3 s of warm-up) and print
// "rate=CHECKS_PER_SECOND".
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
	"time"

	robotsd "robotsd.dev/client"
)

const agent = "Googlebot"

func timed(step func(string) error, urls []string, secs float64) (float64, error) {
	i := 0
	for warm := time.Now().Add(300 * time.Millisecond); time.Now().Before(warm); i++ {
		if err := step(urls[i%len(urls)]); err != nil {
			return 0, err
		}
	}
	t0 := time.Now()
	end := t0.Add(time.Duration(secs * float64(time.Second)))
	for n := 0; ; n += 64 {
		if t := time.Now(); !t.Before(end) {
			return float64(n) / t.Sub(t0).Seconds(), nil
		}
		for k := 0; k < 64; k, i = k+1, i+1 {
			if err := step(urls[i%len(urls)]); err != nil {
				return 0, err
			}
		}
	}
}

func bare(path string, urls []string, secs float64) (float64, error) {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 64<<10)
	id := 0
	return timed(func(url string) error {
		id++
		u, _ := json.Marshal(url)
		line := `{"agent":"` + agent + `","id":` + strconv.Itoa(id) + `,"op":"check","url":` + string(u) + "}\n"
		if _, err := nc.Write([]byte(line)); err != nil {
			return err
		}
		_, err := r.ReadSlice('\n')
		return err
	}, urls, secs)
}

func client(path string, urls []string, secs float64) (float64, error) {
	c := robotsd.New(&robotsd.Options{Socket: path})
	defer c.Close()
	ctx := context.Background()
	return timed(func(url string) error {
		_, err := c.Check(ctx, url, agent)
		return err
	}, urls, secs)
}

func main() {
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	args := flag.Args()
	modes := map[string]func(string, []string, float64) (float64, error){"bare": bare, "client": client}
	if len(args) != 4 || modes[args[0]] == nil {
		fmt.Fprintln(os.Stderr, "usage: bench [-cpuprofile FILE] bare|client SOCKET URLS SECONDS")
		os.Exit(2)
	}
	data, err := os.ReadFile(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	urls := strings.Fields(string(data))
	secs, _ := strconv.ParseFloat(args[3], 64)
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	rate, err := modes[args[0]](args[1], urls, secs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("rate=%.0f\n", rate)
}
