package robotsd_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	robotsd "robotsd.dev/client"
)

// One client for the whole crawler; here robotsd's socket comes from
// $ROBOTSD_SOCKET (nil options), as the tests set it.
func Example() {
	client := robotsd.New(nil)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
	defer cancel()

	r, err := client.Check(ctx, "http://example.com/a/b", "FooBot/2.1")
	if err != nil {
		fmt.Println("robotsd:", err)
		return
	}
	switch {
	case r.Allowed:
		fmt.Println("allowed", r.URL)
	case r.Rule != nil:
		fmt.Printf("disallowed %s (line %d: %s %s)\n", r.URL, r.Rule.Line, r.Rule.Directive, r.Rule.Pattern)
	default:
		fmt.Printf("disallowed %s (%s)\n", r.URL, r.Reason) // robots.txt unreachable
	}

	results, err := client.CheckMany(ctx, []string{"http://example.com/b", "gopher://example.com/"}, "FooBot/2.1")
	if err != nil {
		fmt.Println("robotsd:", err)
		return
	}
	for _, r := range results {
		switch {
		case errors.Is(r.Err, robotsd.ErrUnsupportedScheme):
			fmt.Println("not a web URL:", r.URL)
		case r.Err != nil:
			fmt.Println(r.URL, r.Err)
		default:
			fmt.Println(r.URL, r.Allowed)
		}
	}

	if _, err := client.Inspect(ctx, "never-seen.example"); errors.Is(err, robotsd.ErrNotCached) {
		fmt.Println("never-seen.example is not cached")
	}
	// Output:
	// disallowed http://example.com/a/b (line 2: disallow /a/)
	// http://example.com/b true
	// not a web URL: gopher://example.com/
	// never-seen.example is not cached
}

// Usage preferences and control tokens: may the page be fetched, and may
// it be used to train a model?
func ExampleClient_CheckWith() {
	client := robotsd.New(nil)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
	defer cancel()

	r, err := client.CheckWith(ctx, "http://news.example/today", "FooBot/2.1",
		&robotsd.CheckOptions{Usage: true, Tokens: []string{"Google-Extended"}})
	if err != nil {
		fmt.Println("robotsd:", err)
		return
	}
	fmt.Println("fetch:", r.Allowed)
	for _, p := range robotsd.Purposes {
		fmt.Printf("%s: %s\n", p, r.Usage[p])
	}
	for _, s := range r.UsageFrom {
		fmt.Printf("decided by line %d: %s %s %s\n", s.Line, s.Directive, s.Pattern, s.Value)
	}
	fmt.Println("google-extended:", r.Tokens["google-extended"].Allowed)
	// Output:
	// fetch: true
	// train-ai: disallowed
	// search: unknown
	// ai-input: unknown
	// ai-use: unknown
	// decided by line 3: content-usage / train-ai=n
	// google-extended: false
}
