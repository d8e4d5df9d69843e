package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// pluginManifest is what a package.json says about the resource plugin behind
// an npm package: `"pulumi": {"resource": true, "name": ..., "version": ...}`
// (as @pulumi/command or @pulumi/random have it).
type pluginManifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Pulumi  struct {
		Resource bool   `json:"resource"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Server   string `json:"server"`
	} `json:"pulumi"`
}

// requiredPackages lists the resource plugins that the packages installed in
// the program's node_modules (nested ones and links included) declare, once
// each, so that the engine can load them (or name the one it cannot find)
// before the program registers its first resource of them.
func requiredPackages(programDir string) ([]*pulumirpc.PackageDependency, error) {
	found := map[string]*pulumirpc.PackageDependency{}
	visited := map[string]bool{}
	var walk func(dir string) error
	walk = func(dir string) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || visited[real] {
			return nil // a dangling link is no package; a visited folder is done
		}
		visited[real] = true
		if dep, err := pluginOf(filepath.Join(real, "package.json")); err != nil {
			return err
		} else if dep != nil {
			found[dep.Name+"@"+dep.Version] = dep
		}
		entries, err := os.ReadDir(real)
		if err != nil {
			return nil
		}
		for _, entry := range entries {
			if entry.IsDir() || entry.Type()&os.ModeSymlink != 0 {
				if err := walk(filepath.Join(real, entry.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(filepath.Join(programDir, "node_modules")); err != nil {
		return nil, err
	}
	deps := make([]*pulumirpc.PackageDependency, 0, len(found))
	for _, dep := range found {
		deps = append(deps, dep)
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Name+deps[i].Version < deps[j].Name+deps[j].Version })
	return deps, nil
}

// pluginOf reads a package.json; nil when there is none or it declares no
// resource plugin. A plugin's name defaults to the package's own name without
// the @pulumi/ scope; its version to the package's, with a leading v.
func pluginOf(file string) (*pulumirpc.PackageDependency, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	var manifest pluginManifest
	if json.Unmarshal(data, &manifest) != nil || !manifest.Pulumi.Resource {
		return nil, nil
	}
	name := manifest.Pulumi.Name
	if name == "" {
		if !strings.HasPrefix(manifest.Name, "@pulumi/") {
			return nil, fmt.Errorf("%s declares a resource plugin but not its name (\"pulumi\": {\"name\": ...})", file)
		}
		name = strings.TrimPrefix(manifest.Name, "@pulumi/")
	}
	version := manifest.Pulumi.Version
	if version == "" {
		version = manifest.Version
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return &pulumirpc.PackageDependency{Kind: "resource", Name: name, Version: version, Server: manifest.Pulumi.Server}, nil
}
