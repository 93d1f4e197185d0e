// Package crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
// reflection, no final XOR): the checksum Redis Cluster takes of a key's
// hash tag to find its hash slot.
package crc16
