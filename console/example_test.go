package console_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sqsloop/sqsloop/console"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// A service mounts the console of its database's queues under /console,
// behind basic authentication.
func ExampleNewDatabase() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "console")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "jobs.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	c, err := console.NewDatabase(st, console.Options{
		Prefix: "/console",
		Auth:   console.Auth{Username: "ops", Password: os.Getenv("CONSOLE_PASSWORD") + "example"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	mux := http.NewServeMux()
	mux.Handle("/console/", c)
	_ = &http.Server{Addr: "127.0.0.1:8080", Handler: mux} // ListenAndServe
	// Output:
}
