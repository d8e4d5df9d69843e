// Command pulumi-language-nodejs is a deliberately small Node.js language host
// for the Pulumi engine. See README.md for why it exists.
//
// The engine starts a language plugin as
//
//	pulumi-language-nodejs [--logtostderr] [-v=N] [--tracing URL] ENGINE_ADDRESS
//
// and expects the plugin to print the TCP port of its gRPC server as the very
// first line on stdout. Everything the plugin writes after that line (to
// stdout or stderr) is shown to the user by the engine, which is how the
// output of the Node.js program reaches the terminal.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// maxMessageSize matches the 400 MiB limit the Pulumi engine and SDKs use for
// their gRPC channels; the gRPC default of 4 MiB is too small for large
// requests.
const maxMessageSize = 400 * 1024 * 1024

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	// The engine may prepend logging/tracing flags (see buildPluginArguments in
	// the sdk's plugin package). We accept them so that parsing does not fail,
	// but only --tracing is used (forwarded to the Node runner).
	flags := flag.NewFlagSet("pulumi-language-nodejs", flag.ContinueOnError)
	tracing := flags.String("tracing", "", "Zipkin-compatible tracing endpoint (forwarded to the Node runner)")
	_ = flags.Bool("logtostderr", false, "accepted for compatibility; ignored")
	_ = flags.Int("v", 0, "accepted for compatibility; ignored")
	_ = flags.Bool("logflow", false, "accepted for compatibility; ignored")
	if err := flags.Parse(args); err != nil {
		return err
	}

	// The engine address is the last positional argument. It can be missing
	// when the host is started by hand and attached through
	// PULUMI_DEBUG_LANGUAGES; the engine then sends it in Handshake.
	var engineAddress string
	if rest := flags.Args(); len(rest) > 0 {
		engineAddress = rest[len(rest)-1]
	}

	// Only loopback: the engine always dials 127.0.0.1:<port>.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("could not listen: %w", err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessageSize))
	pulumirpc.RegisterLanguageRuntimeServer(srv, newHost(engineAddress, *tracing))
	healthpb.RegisterHealthServer(srv, health.NewServer())

	// If the engine goes away without shutting us down (crash, kill -9), stop
	// serving so that we do not linger as an orphan.
	if engineAddress != "" {
		go watchEngine(engineAddress, srv)
	}

	// The contract with the engine: the port, alone, on the first stdout line.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)

	if err := srv.Serve(lis); err != nil {
		return fmt.Errorf("gRPC server stopped: %w", err)
	}
	return nil
}

// watchEngine polls the engine's gRPC health service every few minutes and
// stops srv once the engine is unreachable. Unimplemented counts as alive: we
// only care that something answers.
func watchEngine(engineAddress string, srv *grpc.Server) {
	conn, err := grpc.NewClient(engineAddress, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for {
		time.Sleep(5 * time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err != nil && status.Code(err) != codes.Unimplemented {
			srv.Stop()
			return
		}
	}
}
