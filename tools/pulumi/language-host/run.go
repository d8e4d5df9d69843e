package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// exitReported is the exit code with which the language runtimes say they already reported the error to the
// engine: the update fails without another message.
const exitReported = 32

// program is a command for the program's process: its output goes to ours, which the engine shows. Cancelling ctx
// interrupts it (as Ctrl-C would) and kills it if it has not ended 5 seconds later.
func program(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	// Wrapped, so that the child's changes to its stdio (Node makes them non-blocking) do not reach ours.
	cmd.Stdout = struct{ *os.File }{os.Stdout}
	cmd.Stderr = struct{ *os.File }{os.Stderr}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// outcome is the engine's answer for a program that ended with err (from cmd.Run).
func outcome(err error) *pulumirpc.RunResponse {
	// What the program wrote last may still be in the pipe: flushed before the engine hears of the end.
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()
	if err == nil {
		return &pulumirpc.RunResponse{}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run the program: %v", err)}
	}
	switch code := exit.ExitCode(); code {
	case exitReported:
		return &pulumirpc.RunResponse{Bail: true}
	case -1:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("the program was stopped: %v", exit)}
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("the program exited with code %d", code)}
	}
}

// failed is a RunResponse for a program that could not be started, saying why and what to do.
func failed(format string, args ...any) *pulumirpc.RunResponse {
	return &pulumirpc.RunResponse{Error: fmt.Sprintf(format, args...)}
}

// configEnv is the stack's config as every SDK reads it: PULUMI_CONFIG (JSON, keys `project:key`) and
// PULUMI_CONFIG_SECRET_KEYS (a JSON array of the keys that are secrets).
func configEnv(req *pulumirpc.RunRequest) []string {
	config, secretKeys := req.GetConfig(), req.GetConfigSecretKeys()
	if config == nil {
		config = map[string]string{}
	}
	if secretKeys == nil {
		secretKeys = []string{}
	}
	configJSON, _ := json.Marshal(config)
	secretsJSON, _ := json.Marshal(secretKeys)
	return []string{"PULUMI_CONFIG=" + string(configJSON), "PULUMI_CONFIG_SECRET_KEYS=" + string(secretsJSON)}
}

// options are a program's `runtime.options` from Pulumi.yaml.
func options(info *pulumirpc.ProgramInfo) map[string]any {
	if info.GetOptions() == nil {
		return map[string]any{}
	}
	return info.GetOptions().AsMap()
}

// stringOption is a string runtime option, or an error naming the option when it is not a string.
func stringOption(info *pulumirpc.ProgramInfo, name string) (string, error) {
	value, ok := options(info)[name]
	if !ok {
		return "", nil
	}
	s, ok := value.(string)
	if !ok {
		return "", fmt.Errorf("runtime option %s in Pulumi.yaml must be a string, not %v", name, value)
	}
	return s, nil
}

// toolVersion is the first line `name args...` prints, and the path of `name` on PATH.
func toolVersion(ctx context.Context, name string, args ...string) (*pulumirpc.AboutResponse, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH: %w", name, err)
	}
	out, err := exec.CommandContext(ctx, path, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v failed: %w", path, args, err)
	}
	return &pulumirpc.AboutResponse{Executable: path, Version: firstLine(string(out))}, nil
}

// lookPath is name's path on PATH, or an error saying what needs it.
func lookPath(name, why string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH: %s", name, why)
	}
	return path, nil
}
