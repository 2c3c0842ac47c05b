package webhooks

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// requestLogger is the webhooks' LogConstructor. It names the request in
// what is logged, as controller-runtime's default does, but only when
// something is: the default adds seven values to a logger made for every
// request (twice, once for a debug message that is off), and zap encodes
// them at once, on the path of every admission call, although the webhooks
// log nothing on success.
func requestLogger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil || base.GetSink() == nil {
		return base
	}
	ns, name, user := req.Namespace, req.Name, req.UserInfo.Username
	resource, uid := req.Resource, req.UID
	return base.WithSink(lazyValues{sink: withCallDepth(base.GetSink(), 1), values: func() []any {
		return []any{"object", klog.KRef(ns, name), "namespace", ns, "name", name,
			"resource", resource, "user", user, "requestID", uid}
	}})
}

// lazyValues is a sink that adds values to a message when it is written,
// not when the logger is made.
type lazyValues struct {
	sink   logr.LogSink
	values func() []any
}

func (s lazyValues) Init(info logr.RuntimeInfo) { s.sink.Init(info) }

func (s lazyValues) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s lazyValues) Info(level int, msg string, kv ...any) {
	s.sink.WithValues(s.values()...).Info(level, msg, kv...)
}

func (s lazyValues) Error(err error, msg string, kv ...any) {
	s.sink.WithValues(s.values()...).Error(err, msg, kv...)
}

func (s lazyValues) WithValues(kv ...any) logr.LogSink {
	return lazyValues{sink: s.sink.WithValues(kv...), values: s.values}
}

func (s lazyValues) WithName(name string) logr.LogSink {
	return lazyValues{sink: s.sink.WithName(name), values: s.values}
}

// WithCallDepth keeps the caller a message reports: lazyValues adds a
// frame of its own between the caller and the sink.
func (s lazyValues) WithCallDepth(depth int) logr.LogSink {
	return lazyValues{sink: withCallDepth(s.sink, depth), values: s.values}
}

func withCallDepth(sink logr.LogSink, depth int) logr.LogSink {
	if d, ok := sink.(logr.CallDepthLogSink); ok {
		return d.WithCallDepth(depth)
	}
	return sink
}
