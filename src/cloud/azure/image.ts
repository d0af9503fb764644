/**
 * One string per Azure image reference, the form NodeImage.image is written in: a resource id
 * (managed image or gallery image version, /subscriptions/…), a community or shared gallery
 * id (/CommunityGalleries/…, /SharedGalleries/…), or a Marketplace URN publisher:offer:sku:version.
 */
export interface ImageReferenceLike {
  id?: string;
  communityGalleryImageId?: string;
  sharedGalleryImageId?: string;
  publisher?: string;
  offer?: string;
  sku?: string;
  version?: string;
}

export function imageString(ref: ImageReferenceLike | undefined): string {
  if (!ref) return '';
  if (ref.communityGalleryImageId) return ref.communityGalleryImageId;
  if (ref.sharedGalleryImageId) return ref.sharedGalleryImageId;
  if (ref.id) return ref.id;
  if (ref.publisher && ref.offer && ref.sku)
    return `${ref.publisher}:${ref.offer}:${ref.sku}:${ref.version ?? 'latest'}`;
  return '';
}

/** The image reference for `image`, or undefined when it is none of the forms above. */
export function imageReference(image: string): ImageReferenceLike | undefined {
  if (/^\/CommunityGalleries\/[^/]+\/Images\/[^/]+\/Versions\/[^/]+$/i.test(image))
    return { communityGalleryImageId: image };
  if (/^\/SharedGalleries\/[^/]+\/Images\/[^/]+\/Versions\/[^/]+$/i.test(image)) return { sharedGalleryImageId: image };
  if (
    /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/(images|galleries)\/.+$/i.test(
      image,
    )
  )
    return { id: image };
  const urn = /^([^:/\s]+):([^:/\s]+):([^:/\s]+):([^:/\s]+)$/.exec(image);
  if (urn) return { publisher: urn[1] ?? '', offer: urn[2] ?? '', sku: urn[3] ?? '', version: urn[4] ?? '' };
  return undefined;
}
