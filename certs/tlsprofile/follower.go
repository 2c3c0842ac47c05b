package tlsprofile

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Follower keeps a Serving on the cluster's profile: it watches the
// APIServer "cluster" through Informers (the manager's cache) and sets its
// profile on every change, Intermediate once it is deleted. It is a
// manager Runnable that runs on every replica, leader or not, since every
// replica serves webhooks and metrics.
//
// Add it only where the APIServer API is served; read the profile once
// before the manager starts (Read, then Serving.Set), so that no server
// answers a handshake under Intermediate while the watch starts.
type Follower struct {
	Serving   *Serving
	Informers cache.Informers
	Log       logr.Logger
}

// Start watches until ctx is done.
func (f Follower) Start(ctx context.Context) error {
	inf, err := f.Informers.GetInformer(ctx, &configv1.APIServer{})
	if err != nil {
		return fmt.Errorf("watching the cluster's TLS security profile: %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    f.follow,
		UpdateFunc: func(_, obj any) { f.follow(obj) },
		DeleteFunc: f.forget,
	})
	if err != nil {
		return fmt.Errorf("watching the cluster's TLS security profile: %w", err)
	}
	<-ctx.Done()
	return inf.RemoveEventHandler(reg)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (Follower) NeedLeaderElection() bool { return false }

func (f Follower) follow(obj any) {
	as, ok := obj.(*configv1.APIServer)
	if !ok || as.Name != ClusterAPIServer {
		return
	}
	f.set(FromSecurityProfile(as.Spec.TLSSecurityProfile), profileType(as.Spec.TLSSecurityProfile))
}

func (f Follower) forget(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	if as, ok := obj.(*configv1.APIServer); ok && as.Name == ClusterAPIServer {
		f.set(Intermediate(), "none (deleted)")
	}
}

func (f Follower) set(p Profile, typ string) {
	now, changed, ignored := f.Serving.Set(p)
	if changed {
		// ignored: names Go does not implement (Old's DHE suites, say).
		f.Log.Info("following the cluster's TLS security profile", "profile", typ, "settings", now.String(),
			"ignored", ignored)
	}
}

func profileType(p *configv1.TLSSecurityProfile) string {
	if p == nil || p.Type == "" {
		return "none (Intermediate)"
	}
	return string(p.Type)
}
