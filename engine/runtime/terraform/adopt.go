package terraform

import "context"

// importing reports whether the resource is to be adopted: it has an import ID
// and its state does not hold it yet.
func (s *session) importing() bool {
	return s.spec.ImportID != "" && !hasInstance(stateOf(s.res), s.spec)
}

// adopt imports the object named by the import ID when the resource is to be
// adopted, so that the operations that follow continue from its state.
func (s *session) adopt(ctx context.Context) error {
	if !s.importing() {
		return nil
	}
	if err := s.configure(ctx, true); err != nil {
		return err
	}
	return s.run(ctx, "import "+s.spec.ImportID, func(ctx context.Context) error {
		return s.tf.Import(ctx, s.address(), s.spec.ImportID)
	})
}
