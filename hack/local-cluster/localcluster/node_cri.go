package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// cri is a client of containerd's CRI service, as kubelet uses it.
func (c *Cluster) cri() (runtimeapi.RuntimeServiceClient, func() error, error) {
	conn, err := grpc.NewClient("unix://"+c.layout.containerdSocket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return runtimeapi.NewRuntimeServiceClient(conn), conn.Close, nil
}

// criReady succeeds once containerd answers on its CRI socket.
func (c *Cluster) criReady(ctx context.Context) error {
	rt, closeConn, err := c.cri()
	if err != nil {
		return err
	}
	defer func() { _ = closeConn() }()
	_, err = rt.Version(ctx, &runtimeapi.VersionRequest{})
	return err
}

// removePods stops and removes every pod sandbox through the CRI, as kubelet
// would: that runs the CNI DEL (the pod's veth and address go) and unmounts
// the sandbox's /dev/shm and network namespace.
func (c *Cluster) removePods(ctx context.Context) error {
	rt, closeConn, err := c.cri()
	if err != nil {
		return err
	}
	defer func() { _ = closeConn() }()
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ContainerStatus is the status of p's container name, zero when it has
// none yet. The kubelet sorts the statuses by name, not as the spec lists
// the containers: a memcached pod's exporter comes first.
func ContainerStatus(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == name {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

// ContainerPID is the host process id of a container of the real node, by
// the ID a pod's status gives it (containerd://<id>), for reading
// /proc/<pid>/environ or killing it as a crash would.
func (c *Cluster) ContainerPID(ctx context.Context, containerID string) (int, error) {
	rt, closeConn, err := c.cri()
	if err != nil {
		return 0, err
	}
	defer func() { _ = closeConn() }()
	resp, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{
		ContainerId: strings.TrimPrefix(containerID, "containerd://"), Verbose: true,
	})
	if err != nil {
		return 0, err
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.Info["info"]), &info); err != nil || info.Pid == 0 {
		return 0, fmt.Errorf("container %s: no pid in its status (%v)", containerID, err)
	}
	return info.Pid, nil
}
