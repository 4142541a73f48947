package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
)

// manifestExtensions are the files a directory given to -f contributes, as
// kubectl reads them.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// readFileArg reads what -f names: a file, standard input ("-"), or a directory's
// .yaml, .yml and .json files in lexical order (subdirectories too with
// recursive). A directory without such files is an error.
func readFileArg(path string, recursive bool, stdin io.Reader) ([]input.File, error) {
	if path == "-" {
		data, err := input.Read(stdin, "<stdin>")
		if err != nil {
			return nil, err
		}
		return []input.File{{Name: "<stdin>", Data: data}}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		data, err := input.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return []input.File{{Name: path, Data: data}}, nil
	}
	var inputs []input.File
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if p != path && !recursive {
				return fs.SkipDir
			}
			return nil
		case !slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(p))):
			return nil
		}
		data, err := input.ReadFile(p)
		if err != nil {
			return err
		}
		inputs = append(inputs, input.File{Name: p, Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		hint := ""
		if !recursive {
			hint = " (-R reads subdirectories too)"
		}
		return nil, fmt.Errorf("%s: no %s files%s", path, strings.Join(manifestExtensions, ", "), hint)
	}
	return inputs, nil
}

// readSpecArg reads -f into a Spec: a Spec file, or plain Kubernetes manifests
// converted with -n/--namespace (default: the kubeconfig context's namespace)
// for objects without one. The Spec is validated; warnings go to stderr.
func readSpecArg(c *cli.Context, path string) (*engine.Spec, error) {
	inputs, err := readFileArg(path, c.Bool("recursive"), os.Stdin)
	if err != nil {
		return nil, err
	}
	ns := global(c, "namespace")
	spec, manifests, err := input.ReadInputs(inputs, kubeNamespace(c, ns))
	if err != nil {
		return nil, err
	}
	if !manifests && ns != "" {
		return nil, fmt.Errorf("-n/--namespace %s sets the namespace of plain Kubernetes manifests, but %s is a Spec, whose IDs name their namespaces; for the Temporal namespace use --temporal-namespace %s",
			ns, path, ns)
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range spec.Warnings() {
		fmt.Fprintln(os.Stderr, "Warning:", w)
	}
	return spec, nil
}

// kubeNamespace is ns, else the namespace of the kubeconfig context (--kubeconfig,
// --context, else $KUBECONFIG and ~/.kube/config), else default, as kubectl does.
func kubeNamespace(c *cli.Context, ns string) string {
	if ns != "" {
		return ns
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = global(c, "kubeconfig")
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: global(c, "context")})
	if ns, _, err := cfg.Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}

// fileFlags choose the input of preview, apply and spec convert.
func fileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "spec-file", Aliases: []string{"f", "filename"}, Usage: "a Spec (KusionStack's format) or plain Kubernetes manifests (multi-document YAML, JSON, kind: List): a file, a directory of .yaml/.yml/.json files, or - for standard input"},
		&cli.BoolFlag{Name: "recursive", Aliases: []string{"R"}, Usage: "with -f DIR, read its subdirectories too"},
	}
}

func specCommand() *cli.Command {
	return &cli.Command{
		Name:  "spec",
		Usage: "work with resource Specs",
		Subcommands: []*cli.Command{{
			Name:  "convert",
			Usage: "print the Spec that apply -f would apply (plain manifests become Kubernetes resources with IDs and an order), to keep or edit",
			Flags: append(fileFlags(), outputFlag(formatYAML, formatJSON)),
			Action: func(c *cli.Context) error {
				if c.String("spec-file") == "" {
					return errors.New("kumo spec convert needs -f FILE, DIR or -")
				}
				spec, err := readSpecArg(c, c.String("spec-file"))
				if err != nil {
					return err
				}
				return printOutput(c, spec, nil)
			},
		}},
	}
}
