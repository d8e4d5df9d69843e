package main

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// pluginDeclaration is the provider plugin that an installed package declares in its pulumi-plugin.json (SDKs
// Pulumi generates carry one in every language), or nil when it declares none. fallbackVersion is the package's
// own version, for a declaration without one.
func pluginDeclaration(file, fallbackVersion string) *pulumirpc.PackageDependency {
	declared, err := plugin.LoadPulumiPluginJSON(file)
	if err != nil || !declared.Resource || declared.Name == "" {
		return nil
	}
	return dependency(declared, fallbackVersion)
}

func dependency(declared *plugin.PulumiPluginJSON, fallbackVersion string) *pulumirpc.PackageDependency {
	version := declared.Version
	if version == "" {
		version = fallbackVersion
	}
	dep := &pulumirpc.PackageDependency{Kind: "resource", Name: declared.Name, Version: withV(version), Server: declared.Server}
	if p := declared.Parameterization; p != nil {
		dep.Parameterization = &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
	}
	return dep
}

// withV is a version as the engine names plugin versions (v1.2.3); empty stays empty.
func withV(version string) string {
	if version == "" || strings.HasPrefix(version, "v") {
		return version
	}
	return "v" + version
}

// uniquePackages is deps once each (by name, version and parameterization), in a stable order.
func uniquePackages(deps []*pulumirpc.PackageDependency) []*pulumirpc.PackageDependency {
	seen := map[string]*pulumirpc.PackageDependency{}
	for _, dep := range deps {
		key, _ := json.Marshal([]any{dep.Name, dep.Version, dep.Parameterization.GetName(), dep.Parameterization.GetVersion()})
		seen[string(key)] = dep
	}
	unique := make([]*pulumirpc.PackageDependency, 0, len(seen))
	for _, dep := range seen {
		unique = append(unique, dep)
	}
	sort.Slice(unique, func(i, j int) bool {
		return unique[i].Name+" "+unique[i].Version < unique[j].Name+" "+unique[j].Version
	})
	return unique
}

// dependencyInfos is what a package manager lists, as the engine takes it.
func dependencyInfos(deps []plugin.DependencyInfo) []*pulumirpc.DependencyInfo {
	result := make([]*pulumirpc.DependencyInfo, 0, len(deps))
	for _, dep := range deps {
		result = append(result, &pulumirpc.DependencyInfo{Name: dep.Name, Version: dep.Version})
	}
	return result
}
