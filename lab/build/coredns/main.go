// CoreDNS for the lab's real node (lab/node.sh): the cluster's Service names only.
// CoreDNS's own main imports every plugin (core/plugin); this one imports the few the
// lab's Corefile uses. forward is left out on purpose: the lab's DNS answers
// cluster.local and nothing else, so no query can leave the machine.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
