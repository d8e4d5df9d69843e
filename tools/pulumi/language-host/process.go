package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// reportedExit is the exit code by which every Pulumi SDK says it has already told the engine why the program
// failed: the engine then ends the update without a message of ours.
const reportedExit = 32

// stopGrace is how long a program has, once asked to stop, to tell the engine about the creations it has under
// way (our providers answer an interrupted creation with what it made) before it is killed.
const stopGrace = 10 * time.Second

// drainLimit bounds the wait for a program's last output once it has exited: a process it started and left
// running may hold the pipe open for good.
const drainLimit = 2 * time.Second

// runProgram runs cmd to its end, its output relayed to the host's own (which the engine shows); when ctx ends
// first, the program is asked to stop as Ctrl-C would, and killed after stopGrace. The answer is the engine's.
func runProgram(ctx context.Context, cmd *exec.Cmd) *pulumirpc.RunResponse {
	// Through pipes of its own: Node.js switches its stdio to non-blocking mode, which on a shared descriptor
	// would reach the host's and fail its writes.
	relays, err := relayOutput(cmd)
	if err != nil {
		return refusal("could not start the program: %v", err)
	}
	if err := cmd.Start(); err != nil {
		relays.abandon()
		return refusal("could not start the program %s: %v", cmd.Path, err)
	}
	relays.started()
	err = waitOrStop(ctx, cmd, stopGrace)
	relays.drain(drainLimit)
	return verdict(err)
}

// waitOrStop waits for cmd, interrupting it when ctx ends first and killing it when it outlives grace.
func waitOrStop(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(os.Interrupt)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-ended:
		return err
	case <-timer.C:
		_ = cmd.Process.Kill()
		return <-ended
	}
}

// relay copies a program's stdout and stderr, each through a pipe, to the host's.
type relay struct {
	writers []*os.File // the program's ends, closed in the host once the program has them
	readers []*os.File
	done    sync.WaitGroup
}

func relayOutput(cmd *exec.Cmd) (*relay, error) {
	r := &relay{}
	for _, to := range []io.Writer{os.Stdout, os.Stderr} {
		reader, writer, err := os.Pipe()
		if err != nil {
			r.abandon()
			return nil, err
		}
		r.readers, r.writers = append(r.readers, reader), append(r.writers, writer)
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			_, _ = io.Copy(to, reader)
		}()
	}
	cmd.Stdout, cmd.Stderr = r.writers[0], r.writers[1]
	return r, nil
}

// started closes the host's copies of the program's ends, so the pipes end when the program (and whatever it
// started) has closed them.
func (r *relay) started() {
	for _, w := range r.writers {
		_ = w.Close()
	}
}

// drain waits for the program's last output to be relayed, at most limit, then flushes it towards the engine.
func (r *relay) drain(limit time.Duration) {
	copied := make(chan struct{})
	go func() { r.done.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(limit):
		for _, reader := range r.readers {
			_ = reader.Close() // a descendant still holds the pipe: what it writes from now on is not relayed
		}
	}
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()
}

// abandon closes every pipe of a program that did not start.
func (r *relay) abandon() {
	for _, f := range append(r.writers, r.readers...) {
		_ = f.Close()
	}
}

// verdict is the engine's answer for a program that ended with err (nil: it succeeded).
func verdict(err error) *pulumirpc.RunResponse {
	if err == nil {
		return &pulumirpc.RunResponse{}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return refusal("waiting for the program failed: %v", err)
	}
	if exit.ExitCode() == reportedExit {
		return &pulumirpc.RunResponse{Bail: true} // the program's SDK has told the engine why
	}
	if exit.ExitCode() < 0 {
		return refusal("the program was ended by a signal (%v)", exit)
	}
	return refusal("the program ended with exit code %d before telling the engine why (its output above says more)", exit.ExitCode())
}

// refusal is the engine's answer for a program that failed or could not start, saying why and what to do.
func refusal(format string, args ...any) *pulumirpc.RunResponse {
	return &pulumirpc.RunResponse{Error: fmt.Sprintf(format, args...)}
}
