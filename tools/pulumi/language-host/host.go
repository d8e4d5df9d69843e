package main

import (
	"context"
	"io"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is what GetPluginInfo reports: the engine's version this host is built with (set by the toolchain's
// -ldflags, as for the CLI).
var version = "3.248.0"

// language is what differs between the runtimes one host serves; the gRPC service, schema binding and program
// binding are shared (host below, codegen.go).
type language interface {
	// run runs the program to its end, its output relayed to the host's (which the engine shows).
	run(ctx context.Context, l launch, info *pulumirpc.ProgramInfo) *pulumirpc.RunResponse
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
	// link wires SDKs generated into the program's folder into the program; it returns how to use them.
	link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error)
}

// generatedSDK is an SDK that `pulumi package add` generated, at path (relative to the program's root).
type generatedSDK struct {
	path string
	pkg  *schema.Package
}

// host is the LanguageRuntime service for one language.
type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	lang language
	// stopping ends when the programs under way must stop: the engine's Cancel, or the engine gone.
	stopping context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	engine  string // the engine's address: the command line's, or the one Handshake gives
	tracing string
}

func newHost(lang language, engine, tracing string) *host {
	stopping, stop := context.WithCancel(context.Background())
	return &host{lang: lang, stopping: stopping, stop: stop, engine: engine, tracing: tracing}
}

// Handshake gives the engine's address to a host the engine did not start itself (PULUMI_DEBUG_LANGUAGES).
func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	if address := req.GetEngineAddress(); address != "" {
		h.mu.Lock()
		h.engine = address
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// Run runs the program; it is asked to stop when the host is (see stopping).
func (h *host) Run(_ context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	h.mu.Lock()
	l := launchOf(req, h.engine, h.tracing)
	h.mu.Unlock()
	return h.lang.run(h.stopping, l, req.GetInfo()), nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.stop()
	return &emptypb.Empty{}, nil
}

func (h *host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	packages, err := h.lang.packages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// GetRequiredPlugins answers engines that still ask the older question, from the same packages.
func (h *host) GetRequiredPlugins(ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	packages, err := h.lang.packages(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	answer := &pulumirpc.GetRequiredPluginsResponse{}
	for _, p := range packages {
		answer.Plugins = append(answer.Plugins, &pulumirpc.PluginDependency{Name: p.Name, Kind: p.Kind, Version: p.Version, Server: p.Server})
	}
	return answer, nil
}

func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	streams, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer streams.Close()
	info := req.GetInfo()
	if info == nil { // engines before ProgramInfo name only the folder
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetDirectory(), ProgramDirectory: req.GetDirectory(), EntryPoint: "."}
	}
	if err := h.lang.install(server.Context(), info, stdout, stderr); err != nil {
		return err
	}
	return streams.Close()
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
