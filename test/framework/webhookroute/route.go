package webhookroute

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Route is the API server's path to the webhooks, bent to the host; Restore
// undoes it.
type Route struct {
	names Names
	// service is the webhook Service as it was.
	service *corev1.Service
	// ports are the original clientConfig.service.port by webhook name.
	ports map[string]int32
}

// ToHost routes every webhook of hooks, which must all call one Service, to
// port on this host (see the package documentation).
func ToHost(ctx context.Context, k client.Client, hooks Webhooks, port int) (*Route, error) {
	r := &Route{names: hooks.Names(), ports: map[string]int32{}}
	var svcKey client.ObjectKey
	for name, cc := range hooks.ClientConfigs() {
		if cc.Service == nil {
			return nil, fmt.Errorf("webhook %s has no service reference", name)
		}
		key := client.ObjectKey{Namespace: cc.Service.Namespace, Name: cc.Service.Name}
		if svcKey.Name != "" && key != svcKey {
			return nil, fmt.Errorf("webhooks call two Services, %s and %s", svcKey, key)
		}
		svcKey = key
		r.ports[name] = ptr.Deref(cc.Service.Port, 443)
		cc.Service.Port = ptr.To(int32(port))
	}
	if len(r.ports) == 0 {
		return nil, errors.New("no webhook to route")
	}
	svc := &corev1.Service{}
	if err := k.Get(ctx, svcKey, svc); err != nil {
		return nil, err
	}
	r.service = svc.DeepCopy()
	svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost", Ports: svc.Spec.Ports}
	if err := k.Update(ctx, svc); err != nil {
		return nil, err
	}
	return r, hooks.Update(ctx, k)
}

// Restore gives the Service (type, ports and selector; it gets a new cluster
// IP) and the webhook ports back, before their owner starts again.
func (r *Route) Restore(ctx context.Context, k client.Client) error {
	hooks, err := Get(ctx, k, r.names)
	if err != nil {
		return err
	}
	for name, cc := range hooks.ClientConfigs() {
		if p, ok := r.ports[name]; ok && cc.Service != nil {
			cc.Service.Port = ptr.To(p)
		}
	}
	svc := &corev1.Service{}
	if err := k.Get(ctx, client.ObjectKeyFromObject(r.service), svc); err != nil {
		return err
	}
	svc.Spec = corev1.ServiceSpec{Type: r.service.Spec.Type, Ports: r.service.Spec.Ports, Selector: r.service.Spec.Selector}
	return errors.Join(k.Update(ctx, svc), hooks.Update(ctx, k))
}
