package transport

import "github.com/go-chi/chi/v5"

// registerAuthRoutes adds the login endpoints. (Placeholder: being built.)
func (s *Server) registerAuthRoutes(r chi.Router) {}
