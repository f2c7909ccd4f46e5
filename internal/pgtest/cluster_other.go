//go:build !unix

package pgtest

// Throwaway clusters need a unix system; elsewhere set ASKD_TEST_POSTGRES_URL.

type cluster struct{}

func startCluster() (*cluster, error) { return nil, errNoServer }
func stopAll()                        {}
func (c *cluster) adminURL() string   { return "" }
func (c *cluster) start() error       { return errNoServer }
func (c *cluster) stop()              {}
func (c *cluster) remove()            {}
func (c *cluster) running() bool      { return false }
