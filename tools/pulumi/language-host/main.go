// Command pulumi-language-host is gpu-rental's own language host for the Pulumi engine: one binary that serves
// Node.js, Python and Go programs, the language chosen by the name it is started as (pulumi-language-nodejs,
// pulumi-language-python, pulumi-language-go: hard links beside `pulumi`). launch.go says what a program is
// handed, process.go how it runs; each runtime has a file of its own.
//
// The engine starts a language host as `pulumi-language-<runtime> [flags] ENGINE_ADDRESS` and reads the port of
// its gRPC server (the LanguageRuntime service) from the first line of its stdout; whatever the host or the
// program prints afterwards the engine shows to the user.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// maxMessageSize is the engine's own limit for its gRPC channels (schemas and programs can be large).
const maxMessageSize = 400 * 1024 * 1024

func main() {
	if err := serve(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}

func serve(argv []string) error {
	lang, err := languageOf(filepath.Base(argv[0]))
	if err != nil {
		return err
	}
	// The engine may put its logging and tracing flags first; only --tracing means something here.
	flags := flag.NewFlagSet(argv[0], flag.ContinueOnError)
	tracing := flags.String("tracing", "", "tracing endpoint, handed to the program's runtime")
	flags.Bool("logtostderr", false, "ignored")
	flags.Bool("logflow", false, "ignored")
	flags.Int("v", 0, "ignored")
	for _, obsolete := range []string{"binary", "buildTarget", "root", "typechecker", "toolchain", "virtualenv"} {
		flags.String(obsolete, "", "ignored (runtime options come from Pulumi.yaml)")
	}
	if err := flags.Parse(argv[1:]); err != nil {
		return err
	}
	engine := ""
	if rest := flags.Args(); len(rest) > 0 {
		engine = rest[0]
	}

	h := newHost(lang, engine, *tracing)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("could not listen: %w", err)
	}
	server := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessageSize), grpc.MaxSendMsgSize(maxMessageSize))
	pulumirpc.RegisterLanguageRuntimeServer(server, h)
	healthpb.RegisterHealthServer(server, health.NewServer())
	if engine != "" {
		// An engine that dies without stopping us (kill -9) leaves nothing behind: its program is stopped too.
		lost := func() {
			h.stop()
			server.Stop()
		}
		if err := rpcutil.Healthcheck(context.Background(), engine, 5*time.Minute, lost); err != nil {
			return fmt.Errorf("could not watch the engine at %s: %w", engine, err)
		}
	}
	// The engine ends its plugins with SIGINT to their process group, the program's process included (which
	// decides for itself what to do with it): the host takes no more calls, lets the program end, and exits.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	go func() {
		<-interrupts
		server.GracefulStop()
	}()
	fmt.Printf("%d\n", listener.Addr().(*net.TCPAddr).Port)
	return server.Serve(listener)
}

// languageOf is the language this binary serves under the name it was started as.
func languageOf(name string) (language, error) {
	name = strings.TrimSuffix(name, ".exe")
	switch strings.TrimPrefix(name, "pulumi-language-") {
	case "nodejs":
		return nodejs{}, nil
	case "python":
		return python{}, nil
	case "go":
		return golang{}, nil
	}
	return nil, fmt.Errorf("started as %q: link this binary as pulumi-language-nodejs, pulumi-language-python or pulumi-language-go", name)
}
