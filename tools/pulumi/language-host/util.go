package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// command is a program's process: started in dir with env (runProgram relays its output and stops it).
func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// attach runs a tool that Pulumi's toolchain helpers prepared (they answer a command and an error) in dir, its
// output to stdout and stderr; dir "" is the host's own.
func attach(dir string, stdout, stderr io.Writer) func(*exec.Cmd, error) error {
	return func(cmd *exec.Cmd, err error) error {
		if err != nil {
			return err
		}
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, stderr
		return cmd.Run()
	}
}

// onPath is name's path on PATH, or an error that says what needs it.
func onPath(name, why string) (string, error) {
	found, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s: %s is not on PATH", why, name)
	}
	return found, nil
}

// aboutTool is a tool's path and the version it prints (`node --version`: v20.1.0 → 20.1.0).
func aboutTool(ctx context.Context, name string, versionArgs ...string) (*pulumirpc.AboutResponse, error) {
	found, err := onPath(name, "pulumi about asks for its version")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, found, versionArgs...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s failed: %w", found, strings.Join(versionArgs, " "), err)
	}
	version := strings.TrimPrefix(strings.TrimSpace(strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]), "v")
	return &pulumirpc.AboutResponse{Executable: found, Version: version}, nil
}

// findUp is name in dir or in the nearest folder above it that has one (as Node resolves node_modules), or "".
func findUp(dir, name string) string {
	for {
		if candidate := filepath.Join(dir, name); exists(candidate) {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// exists says whether path names a file or folder.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// programDir is the program's folder (where Pulumi.yaml's `main` points), or its project's root.
func programDir(info *pulumirpc.ProgramInfo) string {
	if dir := info.GetProgramDirectory(); dir != "" {
		return dir
	}
	return info.GetRootDirectory()
}

// relativeTo is path relative to dir when it lies inside it (as go.mod names its replacements), else absolute.
func relativeTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
