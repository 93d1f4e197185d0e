package s3api

import (
	"encoding/xml"
	"time"
)

const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// xmlTime formats a time as S3 does in XML bodies.
func xmlTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type errorXML struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`
}

type owner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

type listBucketsXML struct {
	XMLName xml.Name    `xml:"ListAllMyBucketsResult"`
	NS      string      `xml:"xmlns,attr"`
	Owner   owner       `xml:"Owner"`
	Buckets []bucketXML `xml:"Buckets>Bucket"`
}

type bucketXML struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
}

type objectXML struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
	Owner        *owner `xml:"Owner,omitempty"`
}

type prefixXML struct {
	Prefix string `xml:"Prefix"`
}

type listObjectsV2XML struct {
	XMLName               xml.Name    `xml:"ListBucketResult"`
	NS                    string      `xml:"xmlns,attr"`
	Name                  string      `xml:"Name"`
	Prefix                string      `xml:"Prefix"`
	Delimiter             string      `xml:"Delimiter,omitempty"`
	MaxKeys               int         `xml:"MaxKeys"`
	KeyCount              int         `xml:"KeyCount"`
	IsTruncated           bool        `xml:"IsTruncated"`
	ContinuationToken     string      `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	StartAfter            string      `xml:"StartAfter,omitempty"`
	EncodingType          string      `xml:"EncodingType,omitempty"`
	Contents              []objectXML `xml:"Contents"`
	CommonPrefixes        []prefixXML `xml:"CommonPrefixes"`
}

type listObjectsV1XML struct {
	XMLName        xml.Name    `xml:"ListBucketResult"`
	NS             string      `xml:"xmlns,attr"`
	Name           string      `xml:"Name"`
	Prefix         string      `xml:"Prefix"`
	Marker         string      `xml:"Marker"`
	NextMarker     string      `xml:"NextMarker,omitempty"`
	Delimiter      string      `xml:"Delimiter,omitempty"`
	MaxKeys        int         `xml:"MaxKeys"`
	IsTruncated    bool        `xml:"IsTruncated"`
	EncodingType   string      `xml:"EncodingType,omitempty"`
	Contents       []objectXML `xml:"Contents"`
	CommonPrefixes []prefixXML `xml:"CommonPrefixes"`
}

type initiateXML struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// completeRequestXML is the CompleteMultipartUpload request body. Checksum
// elements a client adds to a part are accepted and ignored.
type completeRequestXML struct {
	XMLName xml.Name `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
	} `xml:"Part"`
}

type completeXML struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

type partXML struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
}

type listPartsXML struct {
	XMLName     xml.Name  `xml:"ListPartsResult"`
	NS          string    `xml:"xmlns,attr"`
	Bucket      string    `xml:"Bucket"`
	Key         string    `xml:"Key"`
	UploadID    string    `xml:"UploadId"`
	IsTruncated bool      `xml:"IsTruncated"`
	Parts       []partXML `xml:"Part"`
}

type uploadXML struct {
	Key       string `xml:"Key"`
	UploadID  string `xml:"UploadId"`
	Initiated string `xml:"Initiated"`
}

type listUploadsXML struct {
	XMLName     xml.Name    `xml:"ListMultipartUploadsResult"`
	NS          string      `xml:"xmlns,attr"`
	Bucket      string      `xml:"Bucket"`
	IsTruncated bool        `xml:"IsTruncated"`
	Uploads     []uploadXML `xml:"Upload"`
}

type locationXML struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	NS      string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

type deleteRequestXML struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet"`
	Objects []struct {
		Key string `xml:"Key"`
	} `xml:"Object"`
}

type deletedXML struct {
	Key string `xml:"Key"`
}

type deleteErrorXML struct {
	Key     string `xml:"Key"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

type deleteResultXML struct {
	XMLName xml.Name         `xml:"DeleteResult"`
	NS      string           `xml:"xmlns,attr"`
	Deleted []deletedXML     `xml:"Deleted"`
	Errors  []deleteErrorXML `xml:"Error"`
}
