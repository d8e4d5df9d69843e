package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver"
	"github.com/hashicorp/hcl/v2"
	hclsyntax "github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// The engine's code-generation calls: the schemas they name are read through the engine's loader service (it
// runs the plugins that hold them), and the language's generator in pkg/v3/codegen writes the code.

// withSchemas calls use with the engine's schema loader at target, each schema loaded at most once.
func withSchemas(target string, use func(schema.ReferenceLoader) error) error {
	client, err := schema.NewLoaderClient(target)
	if err != nil {
		return fmt.Errorf("the engine's schema loader at %s does not answer: %w", target, err)
	}
	defer client.Close()
	return use(schema.NewCachedLoader(client))
}

// GeneratePackage writes the language's SDK of the schema the engine sends into the folder it names.
func (h *host) GeneratePackage(ctx context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the engine sent a package schema that is not JSON: %w", err)
	}
	var diags hcl.Diagnostics
	err := withSchemas(req.GetLoaderTarget(), func(loader schema.ReferenceLoader) error {
		pkg, bound, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
		if diags = bound; err != nil || diags.HasErrors() {
			return err
		}
		files, err := h.lang.generatePackage(pkg, req, loader)
		if err != nil {
			return err
		}
		return writeTree(req.GetDirectory(), files)
	})
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
}

// writeTree writes files (paths relative to root) under root, making folders as needed.
func writeTree(root string, files map[string][]byte) error {
	for name, content := range files {
		target := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GenerateProgram writes PCL (what `pulumi import` and `convert` produce) as a program in this language.
func (h *host) GenerateProgram(ctx context.Context, req *pulumirpc.GenerateProgramRequest) (*pulumirpc.GenerateProgramResponse, error) {
	files, diags := parsePCL(req.GetSource())
	if diags.HasErrors() {
		return &pulumirpc.GenerateProgramResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	options := h.lang.bindOptions()
	if !req.GetStrict() {
		options = append(options, pcl.NonStrictBindOptions()...)
	}
	answer := &pulumirpc.GenerateProgramResponse{}
	err := withSchemas(req.GetLoaderTarget(), func(loader schema.ReferenceLoader) error {
		program, bound, err := pcl.BindProgram(files, loader, options...)
		diags = append(diags, bound...)
		if err != nil || program == nil || bound.HasErrors() {
			return err
		}
		source, written, err := h.lang.generateProgram(program)
		answer.Source, diags = source, append(diags, written...)
		return err
	})
	if err != nil {
		return nil, err
	}
	answer.Diagnostics = plugin.HclDiagnosticsToRPCDiagnostics(diags)
	return answer, nil
}

// parsePCL parses the PCL sources, by file name in order (the diagnostics come out the same each time).
func parsePCL(sources map[string]string) ([]*hclsyntax.File, hcl.Diagnostics) {
	names := make([]string, 0, len(sources))
	for name := range sources {
		names = append(names, name)
	}
	sort.Strings(names)
	parser := hclsyntax.NewParser()
	for _, name := range names {
		if err := parser.ParseFile(strings.NewReader(sources[name]), name); err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("reading %s: %v", name, err)}}
		}
	}
	return parser.Files, parser.Diagnostics
}

// Link wires the SDKs that `pulumi package add` generated into the program; each one's schema, which says its
// names in each language, comes from the engine.
func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	var instructions string
	err := withSchemas(req.GetLoaderTarget(), func(loader schema.ReferenceLoader) error {
		sdks := make([]generatedSDK, 0, len(req.GetPackages()))
		for _, linked := range req.GetPackages() {
			pkg, err := boundSchema(ctx, loader, linked.GetPackage())
			if err != nil {
				return fmt.Errorf("the schema of %s could not be loaded: %w", linked.GetPackage().GetName(), err)
			}
			sdks = append(sdks, generatedSDK{path: linked.GetPath(), pkg: pkg})
		}
		var err error
		instructions, err = h.lang.link(ctx, req.GetInfo(), sdks)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &pulumirpc.LinkResponse{ImportInstructions: instructions}, nil
}

// boundSchema is the schema of a package the engine names, bound.
func boundSchema(ctx context.Context, loader schema.ReferenceLoader, dep *pulumirpc.PackageDependency) (*schema.Package, error) {
	ref, err := schema.LoadPackageReferenceV2(ctx, loader, descriptorOf(dep))
	if err != nil {
		return nil, err
	}
	return ref.Definition()
}

// descriptorOf is the loader's name for a package the engine names (a parameterized one names its base too).
func descriptorOf(dep *pulumirpc.PackageDependency) *schema.PackageDescriptor {
	d := &schema.PackageDescriptor{Name: dep.GetName(), DownloadURL: dep.GetServer(), Version: versionOf(dep.GetVersion())}
	if p := dep.GetParameterization(); p != nil {
		d.Parameterization = &schema.ParameterizationDescriptor{Name: p.GetName(), Value: p.GetValue()}
		if v := versionOf(p.GetVersion()); v != nil {
			d.Parameterization.Version = *v
		}
	}
	return d
}

// versionOf is a version as the engine writes them (with or without a leading v), or nil for none.
func versionOf(text string) *semver.Version {
	v, err := semver.ParseTolerant(text)
	if err != nil {
		return nil
	}
	return &v
}
