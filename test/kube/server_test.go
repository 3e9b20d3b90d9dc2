package kube

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/etcd/server/v3/embed"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	servertesting "k8s.io/apiextensions-apiserver/pkg/cmd/server/testing"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// server is the API server the tests share: starting one costs seconds.
var server struct {
	config  *rest.Config
	dynamic dynamic.Interface
	// caPEM is the CA of the serving certificate, for a kubeconfig.
	caPEM []byte
	url   string
}

// logger is StartTestServer's logger outside a test (TestMain).
type logger struct{ verbose bool }

func (l logger) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (l logger) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
func (l logger) Logf(format string, args ...any) {
	if l.verbose {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

// loopbackPort is a free TCP port on 127.0.0.1. etcd binds it itself a
// moment later; the port is only ever offered on loopback.
func loopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd starts an embedded etcd in dir, its client and peer URLs on
// 127.0.0.1.
func startEtcd(dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	// A throwaway single member: fsync buys nothing and costs seconds.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	var urls [2]url.URL
	for i := range urls {
		p, err := loopbackPort()
		if err != nil {
			return nil, err
		}
		urls[i] = url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(p))}
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = urls[:1], urls[:1]
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = urls[1:], urls[1:]
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd not ready after 60s")
	}
}

// fakeKubeconfig points the server's delegated authentication and
// authorization at an address nothing answers on: only the server's own
// loopback token (system:masters) gets in, as in apiextensions-apiserver's
// integration fixtures. withAuthz replaces it for the RBAC test.
const fakeKubeconfig = `apiVersion: v1
kind: Config
clusters:
- cluster: {server: "http://127.1.2.3:12345"}
  name: none
contexts:
- context: {cluster: none, user: none}
  name: none
current-context: none
users:
- name: none
  user: {username: none, password: none}
`

// startServer starts etcd and the API server, both on loopback, and
// installs the CRDs. It returns the function that stops them.
func startServer(dir string, authKubeconfig string) (stop func(), err error) {
	e, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return nil, err
	}
	if authKubeconfig == "" {
		authKubeconfig = filepath.Join(dir, "fake.kubeconfig")
		if err := os.WriteFile(authKubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
			e.Close()
			return nil, err
		}
	}
	s, err := servertesting.StartTestServer(logger{verbose: os.Getenv("KUBE_TEST_VERBOSE") != ""}, nil, []string{
		"--etcd-servers", "http://" + e.Clients[0].Addr().String(),
		"--etcd-prefix", "/" + uuid.NewString(),
		"--authentication-skip-lookup",
		"--authentication-kubeconfig", authKubeconfig,
		"--authorization-kubeconfig", authKubeconfig,
		"--kubeconfig", authKubeconfig,
		// Priority and fairness, namespace lifecycle and webhooks would
		// ask a kube-apiserver that is not there.
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins", "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}, nil)
	if err != nil {
		e.Close()
		return nil, err
	}
	stop = func() { s.TearDownFn(); e.Close() }
	defer func() {
		if err != nil {
			stop()
		}
	}()
	server.config = rest.CopyConfig(s.ClientConfig)
	server.config.QPS, server.config.Burst = -1, 0 // no client-side throttling
	if server.dynamic, err = dynamic.NewForConfig(server.config); err != nil {
		return nil, err
	}
	addr := s.ServerOpts.RecommendedOptions.SecureServing.Listener.Addr().String()
	server.url = "https://" + addr
	if server.caPEM, err = servingCA(addr); err != nil {
		return nil, err
	}
	return stop, installCRDs(server.config)
}

// servingCA is the last certificate the server presents, the CA of its
// serving certificate (apiextensions-apiserver's fixture for 127.0.0.1),
// so that a kubeconfig can verify the server as a client outside the
// test would.
func servingCA(addr string) ([]byte, error) {
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	certs := c.ConnectionState().PeerCertificates
	if len(certs) < 2 || !certs[len(certs)-1].IsCA {
		return nil, fmt.Errorf("the server at %s presents no CA certificate", addr)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certs[len(certs)-1].Raw}), nil
}

// gunzipFile reads testdata/name, a gzip file.
func gunzipFile(name string) ([]byte, error) {
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// kubevirtCRD is KubeVirt's CRD for kind as virt-operator builds it
// (pkg/virt-operator/resource/generate/components/crds.go): versions v1
// (storage) and v1alpha3, each with the published schema, and for
// VirtualMachine a status subresource (a VirtualMachineInstance has none).
func kubevirtCRD(kind, plural string, shortNames []string, statusSubresource bool) (*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := gunzipFile("kubevirt-" + strings.ToLower(kind) + ".schema.yaml.gz")
	if err != nil {
		return nil, err
	}
	var schema apiextensionsv1.CustomResourceValidation
	if err := yaml.UnmarshalStrict(b, &schema); err != nil {
		return nil, fmt.Errorf("%s schema: %w", kind, err)
	}
	deprecation := "kubevirt.io/v1alpha3 is now deprecated and will be removed in a future release."
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".kubevirt.io", Labels: map[string]string{"kubevirt.io": ""}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "kubevirt.io",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: strings.ToLower(kind), Kind: kind,
				ShortNames: shortNames, Categories: []string{"all"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true},
				{Name: "v1alpha3", Served: true, Deprecated: true, DeprecationWarning: &deprecation},
			},
		},
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Schema = schema.DeepCopy()
		if statusSubresource {
			crd.Spec.Versions[i].Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
		}
	}
	return crd, nil
}

// installCRDs creates KubeVirt's VirtualMachine and VirtualMachineInstance
// CRDs and the Prometheus operator's ServiceMonitor CRD, and waits until
// the server serves them.
func installCRDs(cfg *rest.Config) error {
	vm, err := kubevirtCRD("VirtualMachine", "virtualmachines", []string{"vm", "vms"}, true)
	if err != nil {
		return err
	}
	vmi, err := kubevirtCRD("VirtualMachineInstance", "virtualmachineinstances", []string{"vmi", "vmis"}, false)
	if err != nil {
		return err
	}
	b, err := gunzipFile("monitoring.coreos.com_servicemonitors.yaml.gz")
	if err != nil {
		return err
	}
	var sm apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &sm); err != nil {
		return fmt.Errorf("ServiceMonitor CRD: %w", err)
	}
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{vm, vmi, &sm} {
		if _, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{vm, vmi, &sm} {
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.NonStructuralSchema && cond.Status == apiextensionsv1.ConditionTrue {
					return false, fmt.Errorf("CRD %s: schema not structural: %s", crd.Name, cond.Message)
				}
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
		}
	}
	// Established can come a moment before the discovery and handler of
	// the new resource: list each until it answers.
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{vm, vmi, &sm} {
		gvr := gvrOf(crd)
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := server.dynamic.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%s not served: %w", gvr, err)
		}
	}
	return nil
}

// kubeconfig writes a kubeconfig for the server, verifying its serving
// certificate, with the given user entry.
func kubeconfig(dir string, user map[string]any) (string, error) {
	cfg := map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "test", "cluster": map[string]any{
			"server":                     server.url,
			"certificate-authority-data": server.caPEM,
		}}},
		"users":           []any{map[string]any{"name": "test", "user": user}},
		"contexts":        []any{map[string]any{"name": "test", "context": map[string]any{"cluster": "test", "user": "test", "namespace": "default"}}},
		"current-context": "test",
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "kubeconfig")
	return p, os.WriteFile(p, b, 0o600)
}

// gvrOf is the resource a CRD serves, at its storage version.
func gvrOf(crd *apiextensionsv1.CustomResourceDefinition) schema.GroupVersionResource {
	v := crd.Spec.Versions[0].Name
	for _, ver := range crd.Spec.Versions {
		if ver.Storage {
			v = ver.Name
		}
	}
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: v, Resource: crd.Spec.Names.Plural}
}
