package localcluster_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLocalCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Local cluster Suite")
}
