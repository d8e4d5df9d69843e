package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// A Go program without a buildTarget is built into an executable kept under the user's cache, one per program
// folder: `go build -o` leaves an up-to-date executable untouched, so every run after the first links nothing
// (a link is most of a rebuild's second of CPU). Each build goes to the same path by a rename (GOTMPDIR beside it),
// so a run still executing the old file is never disturbed.

// programsCache is where the kept executables live: gpu-rental's cache (GPU_RENTAL_CACHE, else the user's).
func programsCache() string {
	root := os.Getenv("GPU_RENTAL_CACHE")
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		root = filepath.Join(base, "gpu-rental")
	}
	return filepath.Join(root, "go-programs")
}

// keptBuild builds the program in dir into its kept executable and answers the executable's path.
func keptBuild(ctx context.Context, dir string) (string, error) {
	root := programsCache()
	sum := sha256.Sum256([]byte(dir))
	home := filepath.Join(root, hex.EncodeToString(sum[:8]))
	staging := filepath.Join(home, "tmp")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(home, "program-dir"), []byte(dir), 0o644); err != nil {
		return "", err
	}
	forgetGone(root, home)
	binary := filepath.Join(home, "program")
	return binary, goBuild(ctx, dir, binary, "GOTMPDIR="+staging)
}

// forgetGone removes the executables of program folders that no longer exist (a CI job's or a test's checkout).
func forgetGone(root, keep string) {
	entries, _ := os.ReadDir(root)
	for _, entry := range entries {
		home := filepath.Join(root, entry.Name())
		if dir, err := os.ReadFile(filepath.Join(home, "program-dir")); home != keep && err == nil && !exists(string(dir)) {
			_ = os.RemoveAll(home)
		}
	}
}
