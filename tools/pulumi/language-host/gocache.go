package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// A Go program without a buildTarget is built into an executable kept under the user's cache, one per program
// folder: `go build -o` leaves an up-to-date executable untouched, so every run after the first links nothing
// (a link is most of a rebuild's second of CPU). Each build goes to the same path by a rename (GOTMPDIR beside it),
// so a run still executing the old file is never disturbed.
//
// A folder with no executable yet starts from the one last built from the same sources in any folder (a CI job's
// fresh checkout, a copy of the program), linked in place: go build finds it up to date and links nothing. Where
// anything else differs (a local package, a dependency, Go itself), go build links anew, as for any stale one.

// seedDays is how long an executable kept by its sources waits for another folder of the same program.
const seedDays = 7

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
	seed := filepath.Join(root, "by-sources", sourcesKey(dir))
	if !exists(binary) {
		_ = os.Link(seed, binary) // none yet: built below
	}
	if err := goBuild(ctx, dir, binary, "GOTMPDIR="+staging); err != nil {
		return binary, err
	}
	keepSeed(binary, seed)
	return binary, nil
}

// sourcesKey names a program by its folder's own files (go.mod, go.sum and the .go files beside them).
func sourcesKey(dir string) string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(names)
	hash := sha256.New()
	for _, name := range append([]string{filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.sum")}, names...) {
		data, _ := os.ReadFile(name)
		hash.Write([]byte(filepath.Base(name) + "\x00"))
		hash.Write(data)
		hash.Write([]byte{0})
	}
	return hex.EncodeToString(hash.Sum(nil)[:8])
}

// keepSeed links the built executable as the one of its sources (go build touches it at every run of a folder
// that has it), and drops those no folder ran for seedDays; nothing when it is that one already (a run that
// linked nothing). Only a saving: a link that cannot be made changes nothing else.
func keepSeed(binary, seed string) {
	built, err := os.Stat(binary)
	if kept, keptErr := os.Stat(seed); err != nil || (keptErr == nil && os.SameFile(built, kept)) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(seed), 0o755); err != nil {
		return
	}
	partial := seed + ".partial-" + strconv.Itoa(os.Getpid())
	if os.Link(binary, partial) == nil {
		_ = os.Rename(partial, seed)
	}
	entries, _ := os.ReadDir(filepath.Dir(seed))
	for _, entry := range entries {
		if info, err := entry.Info(); err == nil && time.Since(info.ModTime()) > seedDays*24*time.Hour {
			_ = os.Remove(filepath.Join(filepath.Dir(seed), entry.Name()))
		}
	}
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
