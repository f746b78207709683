package jobstate

// Len counts the records m keeps, live or not.
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}
