package filestore

// Reads is how many times s has opened or read a picture.
func Reads(s *Store) int64 { return s.reads.Load() }
