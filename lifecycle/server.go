package lifecycle

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// HTTPServer returns a loop that serves srv: on ln when it is not nil (a
// listener opened beforehand, to learn its address or fail early), else
// on srv.Addr (ListenAndServe). Its Run returns nil once Shutdown has been
// called (http.ErrServerClosed is a clean stop), else Serve's error (a
// nil srv: an error wrapping [sqsloop.ErrInvalidArgument]); its Shutdown is
// srv.Shutdown: it stops accepting and waits for the requests in progress
// until ctx is done. Add it with LoopOption{Last: true}, so that it serves the health
// probes ([LoopGroup.HealthHandler]) and whatever else it serves (metrics,
// the lease page) until every other loop has returned:
//
//	srv := &http.Server{Addr: ":8081", Handler: group.HealthHandler(), ReadHeaderTimeout: 5 * time.Second}
//	_ = group.Add("http", lifecycle.HTTPServer(srv, nil), lifecycle.LoopOption{Last: true})
func HTTPServer(srv *http.Server, ln net.Listener) Runnable {
	return &httpServer{srv: srv, ln: ln}
}

type httpServer struct {
	srv *http.Server
	ln  net.Listener
}

func (s *httpServer) Run(context.Context) error {
	if s.srv == nil {
		if s.ln != nil {
			_ = s.ln.Close()
		}
		return &invalidArgument{"HTTPServer(srv)", "a non-nil *http.Server", "nil"}
	}
	var err error
	if s.ln != nil {
		err = s.srv.Serve(s.ln)
	} else {
		err = s.srv.ListenAndServe()
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *httpServer) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}
