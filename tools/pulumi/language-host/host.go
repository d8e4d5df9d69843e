package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/blang/semver"
	"github.com/hashicorp/hcl/v2"
	hclsyntax "github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is what GetPluginInfo reports: the engine's version this host is built with (set by the toolchain's
// -ldflags, as for the CLI).
var version = "3.248.0"

// language is what differs between the runtimes one host serves; the gRPC plumbing, schema binding and program
// binding are shared (host below).
type language interface {
	// run runs the program to its end, its output going to ours (which the engine shows).
	run(ctx context.Context, req *pulumirpc.RunRequest, p runParams) *pulumirpc.RunResponse
	// packages are the provider plugins that the program's installed dependencies declare.
	packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error)
	install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error
	dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error)
	about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error)
	// generatePackage is the SDK of a bound schema (`pulumi package add`, `gen-sdk`), file name to contents.
	generatePackage(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error)
	// generateProgram is a program in this language from PCL (the code `pulumi import` prints).
	generateProgram(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error)
	bindOptions() []pcl.BindOption
	// link wires SDKs generated into the program's folder into the program; it returns how to import them.
	link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error)
}

// runParams is what every runtime hands its program besides the RunRequest.
type runParams struct {
	engine  string
	tracing string
}

// generatedSDK is an SDK that `pulumi package add` generated, at path (relative to the program's root).
type generatedSDK struct {
	path string
	pkg  *schema.Package
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	lang language
	// cancel ends every program still running (the engine's Cancel; the host's own end).
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	engine  string
	tracing string
}

func newHost(ctx context.Context, lang language, engine, tracing string) *host {
	ctx, cancel := context.WithCancel(ctx)
	return &host{lang: lang, ctx: ctx, cancel: cancel, engine: engine, tracing: tracing}
}

func (h *host) params() runParams {
	h.mu.Lock()
	defer h.mu.Unlock()
	return runParams{engine: h.engine, tracing: h.tracing}
}

// Handshake gives the engine's address to a host the engine did not start itself (PULUMI_DEBUG_LANGUAGES).
func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.GetEngineAddress() != "" {
		h.engine = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	// The program stops when the engine cancels, or gives up on this call.
	runCtx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	context.AfterFunc(ctx, cancel)
	return h.lang.run(runCtx, req, h.params()), nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancel()
	return &emptypb.Empty{}, nil
}

func (h *host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	packages, err := h.lang.packages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// GetRequiredPlugins is GetRequiredPackages for engines that still ask the old question.
func (h *host) GetRequiredPlugins(ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	packages, err := h.lang.packages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	plugins := make([]*pulumirpc.PluginDependency, 0, len(packages))
	for _, p := range packages {
		plugins = append(plugins, &pulumirpc.PluginDependency{Name: p.Name, Kind: p.Kind, Version: p.Version, Server: p.Server})
	}
	return &pulumirpc.GetRequiredPluginsResponse{Plugins: plugins}, nil
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetDirectory(), ProgramDirectory: req.GetDirectory(), EntryPoint: "."}
	}
	if err := h.lang.install(server.Context(), info, stdout, stderr); err != nil {
		return err
	}
	return closer.Close()
}

func (h *host) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest) (*pulumirpc.GetProgramDependenciesResponse, error) {
	deps, err := h.lang.dependencies(ctx, req.GetInfo(), req.GetTransitiveDependencies())
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	return h.lang.about(ctx, req.GetInfo())
}

func (h *host) RuntimeOptionsPrompts(context.Context, *pulumirpc.RuntimeOptionsRequest) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

// GeneratePackage binds the schema the engine sends (its references resolved through the engine's loader) and
// writes the language's SDK into the requested folder.
func (h *host) GeneratePackage(ctx context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	loader, closeLoader, err := engineLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the package schema is not valid JSON: %w", err)
	}
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	files, err := h.lang.generatePackage(pkg, req, loader)
	if err != nil {
		return nil, err
	}
	if err := writeFiles(req.GetDirectory(), files); err != nil {
		return nil, err
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
}

func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GenerateProgram binds PCL (what `pulumi import` and `convert` produce) and writes it in this language.
func (h *host) GenerateProgram(ctx context.Context, req *pulumirpc.GenerateProgramRequest) (*pulumirpc.GenerateProgramResponse, error) {
	loader, closeLoader, err := engineLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()
	parser := hclsyntax.NewParser()
	for name, text := range req.GetSource() {
		if err := parser.ParseFile(strings.NewReader(text), name); err != nil {
			return nil, err
		}
		if parser.Diagnostics.HasErrors() {
			return &pulumirpc.GenerateProgramResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(parser.Diagnostics)}, nil
		}
	}
	options := h.lang.bindOptions()
	if !req.GetStrict() {
		options = append(options, pcl.NonStrictBindOptions()...)
	}
	program, diags, err := pcl.BindProgram(parser.Files, loader, options...)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() || program == nil {
		return &pulumirpc.GenerateProgramResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	files, more, err := h.lang.generateProgram(program)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GenerateProgramResponse{Source: files, Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(append(diags, more...))}, nil
}

// Link loads the schema of each SDK `pulumi package add` generated and has the language wire it in.
func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	loader, closeLoader, err := engineLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()
	var sdks []generatedSDK
	for _, dep := range req.GetPackages() {
		pkg, err := loadPackage(ctx, loader, dep.GetPackage())
		if err != nil {
			return nil, fmt.Errorf("loading the schema of %s: %w", dep.GetPackage().GetName(), err)
		}
		sdks = append(sdks, generatedSDK{path: dep.GetPath(), pkg: pkg})
	}
	instructions, err := h.lang.link(ctx, req.GetInfo(), sdks)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.LinkResponse{ImportInstructions: instructions}, nil
}

// engineLoader loads package schemas through the engine's loader service at target (it finds and runs the plugins),
// each once; close it when done.
func engineLoader(target string) (schema.ReferenceLoader, func(), error) {
	client, err := schema.NewLoaderClient(target)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the engine's schema loader: %w", err)
	}
	return schema.NewCachedLoader(client), func() { client.Close() }, nil
}

func loadPackage(ctx context.Context, loader schema.ReferenceLoader, dep *pulumirpc.PackageDependency) (*schema.Package, error) {
	descriptor := &schema.PackageDescriptor{Name: dep.GetName(), DownloadURL: dep.GetServer()}
	if v, err := semver.ParseTolerant(dep.GetVersion()); err == nil {
		descriptor.Version = &v
	}
	if p := dep.GetParameterization(); p != nil {
		descriptor.Parameterization = &schema.ParameterizationDescriptor{Name: p.GetName(), Value: p.GetValue()}
		if v, err := semver.ParseTolerant(p.GetVersion()); err == nil {
			descriptor.Parameterization.Version = v
		}
	}
	ref, err := schema.LoadPackageReferenceV2(ctx, loader, descriptor)
	if err != nil {
		return nil, err
	}
	return ref.Definition()
}
