package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// resolveModule asks node itself where `module` resolves to from dir. Letting
// node do it (rather than guessing node_modules paths) honours hoisting,
// workspaces, package "exports" maps and NODE_PATH exactly as the program
// will see them at run time.
func resolveModule(ctx context.Context, nodeBin, dir, module string) (string, error) {
	// With `node -e`, process.argv[1] is the first argument after the script.
	cmd := exec.CommandContext(ctx, nodeBin, "-e",
		"process.stdout.write(require.resolve(process.argv[1]))", module)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return "", errors.New(msg)
		}
		return "", err
	}
	path := strings.TrimSpace(stdout.String())
	if path == "" {
		return "", fmt.Errorf("node resolved %s to an empty path", module)
	}
	return path, nil
}

// nodeVersion returns `node --version` without the leading "v".
func nodeVersion(ctx context.Context, nodeBin string) (string, error) {
	out, err := exec.CommandContext(ctx, nodeBin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("could not run %s --version: %w", nodeBin, err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), nil
}

// firstLine picks the line of node's stderr that carries the message, e.g.
// "Error: Cannot find module '@pulumi/pulumi/cmd/run'", skipping the source
// excerpt node prints before it. Falls back to the first non-empty line.
func firstLine(s string) string {
	fallback := ""
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "Error:") {
			return line
		}
		if fallback == "" {
			fallback = line
		}
	}
	return fallback
}

type packageJSON struct {
	Version         string            `json:"version"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// directDependencies reads the package.json closest to dir (dir itself or an
// ancestor) and returns its dependencies and devDependencies. The version is
// the installed one when node_modules has the package, else the declared
// range.
func directDependencies(dir string) ([]*pulumirpc.DependencyInfo, error) {
	pkgDir, pkg, err := findPackageJSON(dir)
	if err != nil {
		return nil, err
	}
	declared := map[string]string{}
	for name, version := range pkg.DevDependencies {
		declared[name] = version
	}
	for name, version := range pkg.Dependencies {
		declared[name] = version
	}
	names := make([]string, 0, len(declared))
	for name := range declared {
		names = append(names, name)
	}
	sort.Strings(names)

	deps := make([]*pulumirpc.DependencyInfo, 0, len(names))
	for _, name := range names {
		version := declared[name]
		if installed := installedVersion(pkgDir, name); installed != "" {
			version = installed
		}
		deps = append(deps, &pulumirpc.DependencyInfo{Name: name, Version: version})
	}
	return deps, nil
}

func findPackageJSON(dir string) (string, *packageJSON, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	for d := start; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "package.json"))
		if err == nil {
			var pkg packageJSON
			if err := json.Unmarshal(data, &pkg); err != nil {
				return "", nil, fmt.Errorf("could not parse %s: %w", filepath.Join(d, "package.json"), err)
			}
			return d, &pkg, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", nil, err
		}
		if filepath.Dir(d) == d {
			return "", nil, fmt.Errorf("no package.json found in %s or any parent directory", start)
		}
	}
}

// installedVersion walks up from dir looking for node_modules/<name>, the way
// node's resolution does, and returns the version of the first one found.
func installedVersion(dir, name string) string {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "node_modules", name, "package.json"))
		if err == nil {
			var pkg packageJSON
			if json.Unmarshal(data, &pkg) == nil {
				return pkg.Version
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
