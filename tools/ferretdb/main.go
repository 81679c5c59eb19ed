// Command ferretdb runs FerretDB v1 with its SQLite backend for the local stack.
//
// It is built from FerretDB's embeddable package because `go install .../cmd/ferretdb` of v1
// panics at start-up without the generated build/version/version.txt.
// It stops on SIGINT/SIGTERM and also when its parent process dies, so a `kill -9` of the
// service never leaves it orphaned holding the port.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteDir := flag.String("sqlite-dir", "data/ferretdb", "directory holding the SQLite databases")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn, error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "invalid -log-level %q: %v\n", *logLevel, err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dir, err := filepath.Abs(*sqliteDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		logger.Error("cannot prepare sqlite dir", "dir", *sqliteDir, "error", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go exitWithParent(ctx, stop, logger)

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/", // the trailing slash marks a directory for the SQLite handler
	})
	if err != nil {
		logger.Error("cannot start FerretDB", "error", err)
		os.Exit(1)
	}

	logger.Info("FerretDB listening", "addr", *listenAddr, "dir", dir)
	if err := f.Run(ctx); err != nil {
		logger.Error("FerretDB stopped with an error", "error", err)
		os.Exit(1)
	}
}

// exitWithParent cancels the run when the process that started us goes away (re-parenting
// changes our parent pid). A parent pid of 1 at start means we were deliberately detached.
func exitWithParent(ctx context.Context, cancel context.CancelFunc, logger *slog.Logger) {
	parent := os.Getppid()
	if parent == 1 {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				logger.Warn("parent process exited, stopping", "parent", parent)
				cancel()
				return
			}
		}
	}
}
